// Drives the real VS Code workbench (code-server) in Debian's Chromium with playwright-core, as a
// person would: palette, terminal, editor, side panel, dialogs. Run by test_vscode_e2e.py, which
// prepares the repository and code-server and checks the disk afterwards.
//
// Usage: node driver.cjs CONFIG.json — CONFIG has url, playwright (path of playwright-core),
// chromium, agentOut (the test agent's output folder), artifacts (screenshot folder), results
// (where this script writes what it saw, step by step), scenario ("person", "steps", "hunk", "bundled"
// or "no-server") and, for "steps", hookScript (the hook payloads to run); for "bundled", label (the
// recorded turn's), file and original (what undoing it puts back); for "hunk", label, file,
// changed (what the turn writes), secondText (a line of its second hunk), expected, firstText (a
// line of its first hunk) and original (the file before the turn).
"use strict";

const fs = require("fs");
const path = require("path");

const config = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const { chromium } = require(config.playwright);

const results = { steps: {}, log: [] };
const T0 = Date.now();

function note(message) {
  const line = `[${((Date.now() - T0) / 1000).toFixed(1)}s] ${message}`;
  results.log.push(line);
  console.log(line);
}

function save() {
  fs.writeFileSync(config.results, JSON.stringify(results, null, 2));
}

async function step(name, fn) {
  const started = Date.now();
  note(`step ${name}: start`);
  try {
    const data = await fn();
    results.steps[name] = { ok: true, ms: Date.now() - started, ...(data || {}) };
    note(`step ${name}: ok`);
  } catch (error) {
    results.steps[name] = { ok: false, ms: Date.now() - started, error: String(error && error.stack ? error.stack : error) };
    note(`step ${name}: FAILED ${error && error.message ? error.message : error}`);
    if (page) {
      await page.screenshot({ path: path.join(config.artifacts, `failed-${name}.png`) }).catch(() => {});
    }
  }
  save();
  return results.steps[name].ok;
}

async function waitFor(what, predicate, timeout = 30000, interval = 200) {
  const end = Date.now() + timeout;
  for (;;) {
    const value = await predicate();
    if (value) {
      return value;
    }
    if (Date.now() > end) {
      throw new Error(`timed out after ${timeout} ms waiting for ${what}`);
    }
    await new Promise((r) => setTimeout(r, interval));
  }
}

/** What the workspace holds on disk now (the editor may show more: unsaved edits). */
function disk() {
  const read = (rel) => {
    try {
      return fs.readFileSync(path.join(config.repo, rel), "utf8");
    } catch {
      return null;
    }
  };
  return { "app/greet.py": read("app/greet.py"), "app/main.py": read("app/main.py"), "app/helper.py": read("app/helper.py"), "README.md": read("README.md") };
}

/** The timeline's entry numbers, from the CLI (the same store as the editor's server). */
function timelineNumbers() {
  const out = require("child_process").execFileSync("takeback", ["--json", "-C", config.repo, "log"], { encoding: "utf8" });
  return JSON.parse(out).map((e) => e.number);
}

function readJson(file) {
  try {
    return JSON.parse(fs.readFileSync(file, "utf8"));
  } catch {
    return undefined;
  }
}

let page;

const palette = () => page.locator(".quick-input-widget");
const sidebar = () => page.locator('[id="workbench.parts.sidebar"]');
const panelRow = (text) => sidebar().locator(".monaco-list-row", { hasText: text }).first();

async function runCommand(title, { followedByPick = false } = {}) {
  await page.keyboard.press("Escape");
  await page.keyboard.press("F1");
  const input = palette().locator("input").first();
  await input.waitFor({ state: "visible", timeout: 10000 });
  await input.fill(`>${title}`);
  // Wait for the exact command in the list, then run it.
  const row = palette().locator(".monaco-list-row", { hasText: title }).first();
  await row.waitFor({ state: "visible", timeout: 10000 });
  await page.keyboard.press("Enter");
  // The palette lingers a moment after Enter: wait until it has closed (unless the command
  // opens a quick pick of its own in the same widget).
  if (!followedByPick) {
    await palette().waitFor({ state: "hidden", timeout: 10000 }).catch(() => {});
  }
}

async function openFile(relative) {
  const name = path.basename(relative);
  await page.keyboard.press("Escape");
  const tab = page.locator(".tabs-container .tab", { hasText: name }).first();
  if (await tab.count()) {
    await tab.click();
  } else {
    await page.keyboard.press("Control+P");
    const input = palette().locator("input").first();
    await input.waitFor({ state: "visible", timeout: 10000 });
    await input.fill(relative);
    const row = palette().locator(".monaco-list-row", { hasText: name }).first();
    await row.waitFor({ state: "visible", timeout: 10000 });
    await page.keyboard.press("Enter");
  }
  await page.locator(".tabs-container .tab.active", { hasText: name }).first().waitFor({ timeout: 10000 });
  await page.locator(".monaco-editor .view-lines").first().waitFor({ timeout: 10000 });
}

async function documents() {
  const file = path.join(config.agentOut, "documents.json");
  fs.rmSync(file, { force: true });
  await runCommand("Test Agent: Report Open Documents");
  return waitFor("the test agent's document report", () => readJson(file), 15000);
}

async function showPanel() {
  const takebackIcon = page.locator('.activitybar .action-item a[aria-label^="Takeback"]').first();
  const checked = await page.locator('.activitybar .action-item.checked a[aria-label^="Takeback"]').count();
  if (!checked) {
    await takebackIcon.click();
  }
  // One view in the container: VS Code hides its pane header and titles the side bar with it.
  await sidebar().locator(".composite.title", { hasText: "Takeback" }).first().waitFor({ timeout: 10000 });
}

/** A panel row's inline action through its confirmation: what the dialog and the outcome said. (The
 * label may end with the command's key binding: "Undo Agent Turn (Ctrl+Alt+Z)".) */
async function inlineAction(row, action, confirm, outcomeText) {
  await row.hover();
  await row.locator(`.action-label[aria-label^="${action}"]`).first().click({ timeout: 10000 });
  const dialog = page.locator(".monaco-dialog-box").first();
  await dialog.waitFor({ timeout: 20000 });
  const preview = await dialog.innerText();
  await dialog.locator(".monaco-button", { hasText: new RegExp(`^${confirm}$`) }).first().click();
  const toast = page.locator(".notifications-toasts .notification-toast", { hasText: outcomeText }).first();
  await toast.waitFor({ timeout: 30000 });
  return { preview, outcome: await toast.innerText() };
}

async function main() {
  fs.mkdirSync(config.artifacts, { recursive: true });
  const browser = await chromium.launch({
    executablePath: config.chromium,
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage"],
    env: { ...process.env },
  });
  const context = await browser.newContext({ viewport: { width: 1400, height: 860 }, deviceScaleFactor: 1 });
  page = await context.newPage();
  page.on("pageerror", (e) => note(`page error: ${e.message}`));

  if (config.scenario === "no-server") {
    await noServer();
    await browser.close();
    return;
  }
  if (config.scenario === "bundled") {
    await bundledScenario();
    await browser.close();
    return;
  }

  const ready = await step("workbench", async () => {
    await page.goto(config.url, { waitUntil: "domcontentloaded", timeout: 60000 });
    await page.locator(".monaco-workbench").waitFor({ timeout: 60000 });
    note("workbench visible");
    await page.locator('.activitybar .action-item a[aria-label^="Takeback"]').first().waitFor({ timeout: 60000 });
    await showPanel();
    note("Takeback panel shown");
    // The welcome content for a running server with no turns yet.
    await sidebar().getByText("No agent turns yet.").first().waitFor({ timeout: 60000 });
    return { url: config.url };
  });
  if (!ready) {
    await browser.close();
    return;
  }
  if (config.scenario === "steps") {
    await stepsScenario();
    await browser.close();
    return;
  }
  if (config.scenario === "hunk") {
    await hunkScenario();
    await browser.close();
    return;
  }
  if (config.scenario === "blame") {
    await blameScenario();
    await browser.close();
    return;
  }

  // (2) A turn bracketed from the integrated terminal with the CLI shows up in the panel.
  await step("cli_turn", async () => {
    await runCommand("Terminal: Create New Terminal");
    const terminal = page.locator(".terminal-wrapper.active .xterm, .terminal .xterm").first();
    await terminal.waitFor({ timeout: 20000 });
    await page.waitForTimeout(1500); // let the shell print its prompt
    await terminal.click();
    note("terminal ready");
    const command =
      'takeback begin --label "Document how to run it (from the terminal)" --session terminal --agent shell' +
      ' && printf "\\nRun it with: python -m app.main\\n" >> README.md && takeback end --command "edit README.md" && echo CLI-TURN-DONE';
    await page.keyboard.type(command, { delay: 2 });
    await page.keyboard.press("Enter");
    note("CLI command typed");
    await waitFor("the CLI turn in the panel", async () => {
      await showPanel();
      return (await panelRow("#1 Document how to run it").count()) > 0;
    }, 45000, 500);
    const text = await panelRow("#1 Document how to run it").innerText();
    await runCommand("View: Close Panel").catch(() => {});
    return { row: text };
  });

  // (1) The test agent edits three files through Takeback's API, as one turn.
  await step("agent_turn", async () => {
    const agent = await agentMultiFileEdit();
    await showPanel();
    await panelRow("#2 Rename greet to welcome").waitFor({ timeout: 20000 });
    const docs = await documents();
    const status = await page.locator('.statusbar-item', { hasText: `#${agent.ended.number} ·` }).first().innerText({ timeout: 10000 });
    return { agent, docs: docs.docs, statusBar: status, row: await panelRow("#2 Rename greet to welcome").innerText() };
  });

  // (3) The person types in greet.py (unsaved); Undo Agent Turn reverts the agent, keeps the person.
  await step("undo_keeps_unsaved_edit", async () => {
    await openFile("app/greet.py");
    const editor = page.locator(".editor-group-container.active .monaco-editor .view-lines").first();
    await editor.click();
    await page.keyboard.press("Control+End");
    await page.keyboard.type("# the person's own note, not saved", { delay: 5 });
    await page.locator(".tabs-container .tab.dirty", { hasText: "greet.py" }).first().waitFor({ timeout: 5000 });
    const before = await documents();

    await runCommand("Takeback: Undo Agent Turn");
    // The dry run's preview, as a modal confirmation.
    const dialog = page.locator(".monaco-dialog-box").first();
    await dialog.waitFor({ timeout: 20000 });
    const preview = await dialog.innerText();
    await page.screenshot({ path: path.join(config.artifacts, "confirm.png") });
    await dialog.locator(".monaco-button", { hasText: /^Undo$/ }).first().click();
    const toast = page.locator(".notifications-toasts .notification-toast", { hasText: "Undo of #" }).first();
    await toast.waitFor({ timeout: 30000 });
    const outcome = await toast.innerText();
    const after = await waitFor("the buffer without the agent's change", async () => {
      const d = await documents();
      const greet = d.docs.find((x) => x.path.endsWith(path.join("app", "greet.py")));
      return greet && !greet.text.includes("welcome") ? d : undefined;
    }, 15000, 500);
    const dirtyTab = (await page.locator(".tabs-container .tab.dirty", { hasText: "greet.py" }).count()) > 0;
    return { before: before.docs, after: after.docs, preview, outcome, dirtyTab, disk: disk() };
  });

  // (4) The panel shows the turns; clicking a file opens VS Code's diff editor.
  await step("panel_and_diff", async () => {
    await page.keyboard.press("Escape");
    await runCommand("View: Hide Panel").catch(() => {});
    await showPanel();
    // A wider side bar, so the screenshots show whole labels: drag the sash at its right edge.
    const box = await sidebar().boundingBox();
    const sashes = page.locator(".monaco-sash.vertical");
    for (let i = 0; box && i < (await sashes.count()); i++) {
      const sash = await sashes.nth(i).boundingBox();
      if (sash && sash.height > 100 && Math.abs(sash.x + sash.width / 2 - (box.x + box.width)) < 8) {
        const x = sash.x + sash.width / 2;
        const y = sash.y + sash.height / 2;
        await page.mouse.move(x, y);
        await page.waitForTimeout(300);
        await page.mouse.down();
        await page.mouse.move(x + 110, y, { steps: 5 });
        await page.mouse.move(x + 180, y, { steps: 5 });
        await page.mouse.up();
        note(`side bar widened: ${JSON.stringify(await sidebar().boundingBox())}`);
        break;
      }
    }
    const turnRow = panelRow("#2 Rename greet to welcome");
    await turnRow.waitFor({ timeout: 10000 });
    const turnText = await turnRow.innerText();
    // Expand the agent's turn if needed, then click its greet.py.
    const expanded = await turnRow.getAttribute("aria-expanded");
    if (expanded !== "true") {
      await turnRow.click();
    }
    // The turn's files render after the click (later on a loaded machine): wait for them.
    let rows = [];
    for (let tries = 0; tries < 50; tries++) {
      rows = await sidebar().locator(".monaco-list-row").allInnerTexts();
      const at = rows.findIndex((r) => r.includes("#2 Rename greet to welcome"));
      if (at >= 0 && rows.some((r, i) => i > at && r.includes("main.py"))) break;
      await page.waitForTimeout(200);
    }
    await page.mouse.move(5, 5);
    await page.screenshot({ path: path.join(config.artifacts, "panel.png") });
    // The agent turn's own main.py: the first main.py row after the turn's row.
    const turnIndex = rows.findIndex((r) => r.includes("#2 Rename greet to welcome"));
    const fileIndex = rows.findIndex((r, i) => i > turnIndex && r.includes("main.py"));
    if (turnIndex < 0 || fileIndex < 0) {
      throw new Error(`no main.py row under the agent's turn in ${JSON.stringify(rows)}`);
    }
    await sidebar().locator(".monaco-list-row").nth(fileIndex).click();
    const diffEditor = page.locator(".monaco-diff-editor").first();
    await diffEditor.waitFor({ timeout: 20000 });
    const tab = await page.locator(".tabs-container .tab.active").first().innerText();
    await page.waitForTimeout(800);
    const original = await diffEditor.locator(".editor.original .view-lines").innerText();
    const modified = await diffEditor.locator(".editor.modified .view-lines").innerText();
    await page.screenshot({ path: path.join(config.artifacts, "diff.png") });
    return { turnRow: turnText, rows, tab, original, modified };
  });

  // An inline action in the panel: redo the undone turn; the person's unsaved note survives again.
  await step("redo_from_panel", async () => {
    await showPanel();
    const { preview, outcome } = await inlineAction(panelRow("#2 Rename greet to welcome"), "Redo Agent Turn", "Redo", "Redo of #");
    const after = await waitFor("the agent's change back in the buffer", async () => {
      const d = await documents();
      const greet = d.docs.find((x) => x.path.endsWith(path.join("app", "greet.py")));
      return greet && greet.text.includes("def welcome(") ? d : undefined;
    }, 15000, 500);
    return { preview, outcome, after: after.docs, disk: disk() };
  });

  // The default key binding (Ctrl+Alt+Z) asks to undo the agent's turn; Cancel changes nothing.
  await step("keybinding_undo_cancel", async () => {
    await page.keyboard.press("Escape");
    await openFile("app/greet.py");
    await page.locator(".editor-group-container.active .monaco-editor .view-lines").first().click();
    await page.keyboard.press("Control+Alt+z");
    const dialog = page.locator(".monaco-dialog-box").first();
    await dialog.waitFor({ timeout: 20000 });
    const preview = await dialog.innerText();
    await dialog.locator(".monaco-button", { hasText: /^Cancel$/ }).first().click();
    await dialog.waitFor({ state: "hidden", timeout: 10000 });
    await page.waitForTimeout(1000);
    const d = await documents();
    const file = path.join(config.agentOut, "keybindings.json");
    await runCommand("Test Agent: Report Default Key Bindings");
    const keys = await waitFor("the default key bindings", () => readJson(file), 15000);
    return { preview, after: d.docs, numbers: timelineNumbers(), keybindings: keys };
  });

  // The server's code action in VS Code's light bulb menu (Ctrl+.), through the same preview:
  // revert turn #2's changes to greet.py only.
  await step("code_action_revert_file", async () => {
    await page.keyboard.press("Escape");
    await openFile("app/greet.py");
    await page.locator(".editor-group-container.active .monaco-editor .view-lines").first().click();
    await page.keyboard.press("Control+Home");
    await page.keyboard.press("Control+.");
    const menu = page.locator(".action-widget").first();
    await menu.waitFor({ timeout: 15000 });
    const items = await menu.locator(".monaco-list-row").allInnerTexts();
    await menu.locator(".monaco-list-row", { hasText: "Revert turn #2" }).first().click();
    const dialog = page.locator(".monaco-dialog-box").first();
    await dialog.waitFor({ timeout: 20000 });
    const preview = await dialog.innerText();
    await dialog.locator(".monaco-button", { hasText: /^Revert$/ }).first().click();
    const toast = page.locator(".notifications-toasts .notification-toast", { hasText: "Revert of #2" }).first();
    await toast.waitFor({ timeout: 30000 });
    const outcome = await toast.innerText();
    const after = await waitFor("greet.py without the agent's change", async () => {
      const d = await documents();
      const greet = d.docs.find((x) => x.path.endsWith(path.join("app", "greet.py")));
      return greet && greet.text.includes("def greet(") ? d : undefined;
    }, 15000, 500);
    return { items, preview, outcome, after: after.docs, disk: disk() };
  });

  // The palette's pickers: "Show Turn Diff" and "Revert Agent Turn…" list the turns to choose.
  await step("palette_pickers", async () => {
    await page.keyboard.press("Escape");
    await runCommand("Takeback: Show Turn Diff", { followedByPick: true });
    const turnOne = palette().locator(".monaco-list-row", { hasText: "#1 Document how to run it" }).first();
    await turnOne.waitFor({ timeout: 15000 });
    const listed = await palette().locator(".monaco-list-row").allInnerTexts();
    await turnOne.click();
    await page.locator(".tabs-container .tab.active", { hasText: "turn-1.diff" }).first().waitFor({ timeout: 15000 });
    await page.waitForTimeout(500);
    const patch = await page.locator(".editor-group-container.active .monaco-editor .view-lines").first().innerText();

    await runCommand("Takeback: Revert Agent Turn…", { followedByPick: true });
    const pick = palette().locator(".monaco-list-row", { hasText: "#1 Document how to run it" }).first();
    await pick.waitFor({ timeout: 15000 });
    await pick.click();
    const dialog = page.locator(".monaco-dialog-box").first();
    await dialog.waitFor({ timeout: 20000 });
    const preview = await dialog.innerText();
    await dialog.locator(".monaco-button", { hasText: /^Revert$/ }).first().click();
    const toast = page.locator(".notifications-toasts .notification-toast", { hasText: "Revert of #1" }).first();
    await toast.waitFor({ timeout: 30000 });
    return { listed, patch, preview, outcome: await toast.innerText(), disk: disk() };
  });

  await browser.close();
}

/** The test agent's turn: "Test Agent: Make a Multi-File Edit" with app/greet.py open (three
 * files through Takeback's API, as one turn); its result, or an error when it failed. */
async function agentMultiFileEdit() {
  await openFile("app/greet.py");
  fs.rmSync(path.join(config.agentOut, "agent.json"), { force: true });
  await runCommand("Test Agent: Make a Multi-File Edit");
  const agent = await waitFor("the test agent's result", () => readJson(path.join(config.agentOut, "agent.json")), 30000);
  if (!agent.ok) {
    throw new Error(`the test agent failed: ${agent.error}`);
  }
  return agent;
}

/** Run an agent's hooks as the agent does: `takeback hook claude` with each payload on stdin,
 * the files its tools write written in between (config.hookScript, made by harness.py). */
// The test agent's turn, then who wrote greet.py's first line: the workbench's hover providers
// (vscode.executeHoverProvider) and "Takeback: Toggle Line Blame" on the open editor, as the test
// agent reports them; then the hover a person sees on that line.
async function blameScenario() {
  await step("blame", async () => {
    await agentMultiFileEdit();
    await openFile("app/greet.py");
    fs.rmSync(path.join(config.agentOut, "blame.json"), { force: true });
    await runCommand("Test Agent: Report Line Blame");
    const blame = await waitFor("the line blame report", () => readJson(path.join(config.agentOut, "blame.json")), 30000);
    if (!blame.ok) {
      throw new Error(`the line blame report failed: ${blame.error}`);
    }
    // The person's hover on the first line's word "welcome".
    const word = page.locator(".editor-group-container.active .monaco-editor .view-line", { hasText: "def welcome" }).first();
    await word.hover({ position: { x: 60, y: 5 } });
    const hover = page.locator(".monaco-hover-content", { hasText: "Agent turn #1" }).first();
    await hover.waitFor({ timeout: 20000 });
    const hoverText = await hover.innerText();
    const links = await hover.locator("a").allInnerTexts();
    await page.screenshot({ path: path.join(config.artifacts, "vscode-line-blame-hover.png") });
    return { blame, hoverText, links };
  });
}

function runHooks(script) {
  const { execFileSync } = require("child_process");
  for (const item of script) {
    if (item.write) {
      fs.writeFileSync(path.join(config.repo, item.write[0]), item.write[1]);
      continue;
    }
    const input = typeof item.hook === "string" ? item.hook : JSON.stringify(item.hook);
    const out = execFileSync("takeback", ["hook", "claude"], { input, cwd: config.repo, env: { ...process.env, CLAUDECODE: "1" }, encoding: "utf8" });
    if (out) {
      throw new Error(`takeback hook printed ${JSON.stringify(out)}`);
    }
  }
}

function readRepo(rel) {
  try {
    return fs.readFileSync(path.join(config.repo, rel), "utf8");
  } catch {
    return null;
  }
}

// An agent's hooks record a turn of two tool calls while the workbench is open: the panel shows
// the turn's steps, one restores to just before a step; then a hook fails, and the person is
// warned and sees the failure log.
async function stepsScenario() {
  await step("hook_turn_steps", async () => {
    runHooks(config.hookScript);
    note("hook turn recorded");
    await showPanel();
    const turnRow = panelRow("#1 Write the steps file");
    await waitFor("the hook-recorded turn in the panel", async () => (await turnRow.count()) > 0, 45000, 500);
    let rows = [];
    await waitFor("the turn's steps", async () => {
      // A refresh that lands just after a click can redraw the row collapsed: expand it again.
      if ((await turnRow.getAttribute("aria-expanded")) !== "true") {
        await turnRow.click();
      }
      rows = await sidebar().locator(".monaco-list-row").allInnerTexts();
      return rows.some((r) => r.includes("#1.2"));
    }, 20000, 300);
    await page.mouse.move(5, 5);
    await page.screenshot({ path: path.join(config.artifacts, "steps.png") });
    return { rows, turnRow: await turnRow.innerText(), stepAria: await panelRow("#1.1").getAttribute("aria-label") };
  });

  await step("restore_before_step", async () => {
    const { preview, outcome } = await inlineAction(panelRow("#1.2"), "Restore to Before This Step", "Restore", "Restore of #");
    return { preview, outcome, disk: { "steps.txt": readRepo("steps.txt"), "gen.txt": readRepo("gen.txt") } };
  });

  await step("hook_failure_warning", async () => {
    await page.keyboard.press("Escape");
    runHooks([{ hook: "{not json" }]);
    note("a failing hook ran");
    const toast = page.locator(".notifications-toasts .notification-toast", { hasText: "hook failed to record" }).first();
    await toast.waitFor({ timeout: 30000 });
    const message = await toast.innerText();
    const warning = page.locator(".statusbar-item", { hasText: "hook failure" }).first();
    await warning.waitFor({ timeout: 15000 });
    const statusText = await warning.innerText();
    let tooltip = null;
    try {
      await warning.hover();
      const hover = page.locator(".workbench-hover, .monaco-hover", { hasText: "hooks failed" }).first();
      await hover.waitFor({ timeout: 5000 });
      tooltip = await hover.innerText();
    } catch (error) {
      note(`no status bar tooltip: ${error.message}`);
    }
    await page.screenshot({ path: path.join(config.artifacts, "hook-failure.png") });
    // The server's own warning (for clients without one) is turned off here: one toast, not two.
    const serverToasts = await page.locator(".notifications-toasts .notification-toast", { hasText: "logged; last:" }).count();
    await toast.locator(".monaco-button", { hasText: "Show Hook Failures" }).first().click();
    await page.locator(".tabs-container .tab.active", { hasText: "hook-failures" }).first().waitFor({ timeout: 15000 });
    await page.waitForTimeout(500);
    const report = await page.locator(".editor-group-container.active .monaco-editor .view-lines").first().innerText();
    // Seen: the status bar no longer warns.
    await waitFor("the status bar without the warning", async () => (await page.locator(".statusbar-item", { hasText: "hook failure" }).count()) === 0, 15000, 300);
    const after = await page.locator(".statusbar-item", { hasText: "#1 ·" }).first().innerText({ timeout: 10000 });
    return { message, statusText, tooltip, serverToasts, report, after };
  });
}

// A turn that changed two places of one file (recorded with the CLI, config.file becomes
// config.changed); its diff view shows "Revert This Change" on each hunk; the action on the second
// (the line holding config.secondText) takes back only that hunk, through the confirmation.
async function hunkScenario() {
  const { execFileSync } = require("child_process");
  await step("hunk_actions", async () => {
    execFileSync("takeback", ["begin", "--label", config.label, "--session", "terminal", "--agent", "shell"], { cwd: config.repo });
    fs.writeFileSync(path.join(config.repo, config.file), config.changed);
    execFileSync("takeback", ["end"], { cwd: config.repo });
    const turnRow = panelRow(`#1 ${config.label}`);
    await waitFor("the turn in the panel", async () => {
      await showPanel();
      return (await turnRow.count()) > 0;
    }, 45000, 500);
    const name = path.basename(config.file);
    await waitFor("the turn's file", async () => {
      if ((await turnRow.getAttribute("aria-expanded")) !== "true") {
        await turnRow.click();
      }
      return (await panelRow(name).count()) > 0 && (await sidebar().locator(".monaco-list-row", { hasText: name }).count()) > 0;
    }, 20000, 300);
    const rows = await sidebar().locator(".monaco-list-row").allInnerTexts();
    const fileIndex = rows.findIndex((r, i) => i > rows.findIndex((x) => x.includes(`#1 ${config.label}`)) && r.includes(name));
    await sidebar().locator(".monaco-list-row").nth(fileIndex).click();
    const diffEditor = page.locator(".monaco-diff-editor").first();
    await diffEditor.waitFor({ timeout: 20000 });
    const modified = diffEditor.locator(".editor.modified");
    // More room for the diff view (and the screenshot): hide the side bar.
    await page.keyboard.press("Control+B");
    // The labels are decorations: text VS Code draws after the hunk's first line (CSS content).
    const labels = await waitFor("a Revert This Change label on each hunk", async () => {
      const found = await modified.locator(".view-line").evaluateAll((lines) =>
        lines.flatMap((line) => Array.from(line.querySelectorAll("span")).map((span) => {
          const after = getComputedStyle(span, "::after").content;
          const shown = after && after !== "none" ? after : span.textContent;
          return shown && shown.includes("Revert This Change") ? `${line.textContent.trim()} | ${shown}` : undefined;
        }).filter(Boolean)),
      );
      return found.length >= 2 ? found : undefined;
    }, 20000, 300);
    await page.waitForTimeout(500);
    const tab = await page.locator(".tabs-container .tab.active").first().innerText();
    // Hover the second hunk's line: the action, as a link.
    const line = modified.locator(".view-line", { hasText: config.secondText }).first();
    await line.waitFor({ timeout: 10000 });
    const hover = page.locator(".monaco-hover", { hasText: "Revert This Change" }).first();
    await waitFor("the hunk's hover", async () => {
      const box = await line.boundingBox();
      await page.mouse.move(box.x + 30, box.y + box.height / 2);
      await page.mouse.move(box.x + 40, box.y + box.height / 2);
      return (await hover.isVisible().catch(() => false)) ? true : undefined;
    }, 20000, 800);
    const hoverText = await hover.innerText();
    await page.screenshot({ path: path.join(config.artifacts, "revert-hunk.png") });
    await hover.locator("a", { hasText: "Revert This Change" }).first().click();
    const dialog = page.locator(".monaco-dialog-box").first();
    await dialog.waitFor({ timeout: 20000 });
    const preview = await dialog.innerText();
    await dialog.locator(".monaco-button", { hasText: /^Revert$/ }).first().click();
    const toast = page.locator(".notifications-toasts .notification-toast", { hasText: "Revert" }).first();
    await toast.waitFor({ timeout: 30000 });
    const outcome = await toast.innerText();
    const disk = await waitFor("the file on disk without the second hunk", () => {
      const text = readRepo(config.file);
      return text === config.expected ? text : undefined;
    }, 20000, 300).catch(() => readRepo(config.file));
    return { rows, tab, labels, hoverText, preview, outcome, disk };
  });

  // The server's code action on the lines the first hunk still covers in the file itself
  // (Ctrl+.): "Take back these lines from turn #1" takes back that hunk too, through the preview.
  await step("hunk_code_action", async () => {
    await page.keyboard.press("Escape");
    await runCommand("View: Close All Editors");
    await openFile(config.file);
    const editor = page.locator(".editor-group-container.active .monaco-editor").first();
    const line = editor.locator(".view-line", { hasText: config.firstText }).first();
    await line.waitFor({ timeout: 15000 });
    const menu = page.locator(".action-widget").first();
    const title = "Take back these lines from turn #1";
    let items = [];
    await waitFor("the take-back action in the light bulb menu", async () => {
      await page.keyboard.press("Escape");
      await line.click();
      await page.keyboard.press("End");
      await page.keyboard.press("Control+.");
      await menu.waitFor({ timeout: 5000 }).catch(() => undefined);
      items = await menu.locator(".monaco-list-row").allInnerTexts().catch(() => []);
      return items.some((t) => t.includes(title)) ? true : undefined;
    }, 40000, 1000);
    await menu.locator(".monaco-list-row", { hasText: title }).first().click();
    const dialog = page.locator(".monaco-dialog-box").first();
    await dialog.waitFor({ timeout: 20000 });
    const preview = await dialog.innerText();
    await dialog.locator(".monaco-button", { hasText: /^Revert$/ }).first().click();
    await dialog.waitFor({ state: "hidden", timeout: 20000 });
    const disk = await waitFor("the file on disk without either hunk", () => {
      const text = readRepo(config.file);
      return text === config.original ? text : undefined;
    }, 20000, 300).catch(() => readRepo(config.file));
    return { items, preview, disk };
  });
}

// No `takeback` anywhere: the person is told what is missing and how to fix it, with the log.
async function noServer() {
  await step("no_server", async () => {
    await page.goto(config.url, { waitUntil: "domcontentloaded", timeout: 60000 });
    await page.locator(".monaco-workbench").waitFor({ timeout: 60000 });
    const toast = page.locator(".notifications-toasts .notification-toast", { hasText: "Takeback:" }).first();
    await toast.waitFor({ timeout: 60000 });
    const message = await toast.innerText();
    await showPanel();
    const welcome = await sidebar().locator(".welcome-view-content, .pane-body").first().innerText();
    await page.screenshot({ path: path.join(config.artifacts, "no-server.png") });
    await toast.locator(".monaco-button", { hasText: "Show Logs" }).first().click();
    const output = page.locator(".part.panel .monaco-editor .view-lines").first();
    await output.waitFor({ timeout: 15000 });
    await page.waitForTimeout(500);
    return { message, welcome, log: await output.innerText() };
  });
}

// The extension on its own (its bundled Takeback, no `takeback` on PATH): the turn recorded
// beforehand with the CLI (config.label) shows in the panel; undoing it from its row restores
// config.file on disk to config.original.
async function bundledScenario() {
  await step("bundled_turn", async () => {
    await page.goto(config.url, { waitUntil: "domcontentloaded", timeout: 60000 });
    await page.locator(".monaco-workbench").waitFor({ timeout: 60000 });
    await page.locator('.activitybar .action-item a[aria-label^="Takeback"]').first().waitFor({ timeout: 60000 });
    const row = panelRow(`#1 ${config.label}`); // the turn's row (its session's row holds the prompt too)
    await waitFor("the recorded turn in the panel", async () => {
      await showPanel();
      return (await row.count()) > 0;
    }, 60000, 500);
    const text = await row.innerText();
    await page.mouse.move(5, 5);
    await page.screenshot({ path: path.join(config.artifacts, "bundled.png") });
    const { preview, outcome } = await inlineAction(row, "Undo Agent Turn", "Undo", "Undo of #");
    const restored = await waitFor(`${config.file} restored on disk`, () => readRepo(config.file) === config.original, 20000, 300);
    return { row: text, preview, outcome, restored };
  });
}

main()
  .catch((error) => {
    results.fatal = String(error && error.stack ? error.stack : error);
    note(`fatal: ${results.fatal}`);
  })
  .finally(() => {
    results.seconds = (Date.now() - T0) / 1000;
    save();
    process.exit(0);
  });
