// A minimal agent extension, as a real one would use Takeback: get the API from the Takeback
// extension, begin a turn, apply a vscode.WorkspaceEdit through it, end the turn with checks.
const fs = require("fs");
const path = require("path");
const vscode = require("vscode");

function out(name, data) {
  const dir = process.env.TAKEBACK_TEST_AGENT_OUT;
  if (dir) {
    fs.writeFileSync(path.join(dir, name), JSON.stringify(data, null, 2));
  }
}

function replaceAll(edit, doc, from, to) {
  const text = doc.getText();
  let at = text.indexOf(from);
  while (at >= 0) {
    edit.replace(doc.uri, new vscode.Range(doc.positionAt(at), doc.positionAt(at + from.length)), to);
    at = text.indexOf(from, at + from.length);
  }
}

async function run() {
  const started = Date.now();
  try {
    const takeback = vscode.extensions.getExtension("takeback.takeback");
    const api = await takeback.activate();
    const folder = vscode.workspace.workspaceFolders[0].uri;
    const greet = await vscode.workspace.openTextDocument(vscode.Uri.joinPath(folder, "app", "greet.py"));
    const main = await vscode.workspace.openTextDocument(vscode.Uri.joinPath(folder, "app", "main.py"));

    const turn = await api.beginTurn({ label: "Rename greet to welcome and add a helper", sessionId: "agent-session-1", agent: "test-agent" });
    const edit = new vscode.WorkspaceEdit();
    replaceAll(edit, greet, "def greet(", "def welcome(");
    replaceAll(edit, greet, "Hello", "Welcome");
    replaceAll(edit, main, "import greet", "import welcome");
    replaceAll(edit, main, "greet(", "welcome(");
    edit.createFile(vscode.Uri.joinPath(folder, "app", "helper.py"), {
      contents: Buffer.from('def shout(text):\n    return text.upper() + "!"\n'),
    });
    const applied = await api.applyEdit(edit, { label: "rename + helper" });
    const ended = await api.endTurn({ turnId: turn.id, commandsRun: ["python -m pytest -q"], checks: [{ name: "tests", status: true, command: "python -m pytest -q" }] });
    out("agent.json", { ok: true, apiVersion: api.apiVersion, turn, applied, ended, ms: Date.now() - started });
    vscode.window.showInformationMessage(`Test agent: turn #${ended.number} recorded (${(ended.files || []).length} files)`);
  } catch (error) {
    out("agent.json", { ok: false, error: String(error && error.stack ? error.stack : error) });
    vscode.window.showErrorMessage(`Test agent failed: ${error}`);
  }
}

async function dump() {
  const docs = vscode.workspace.textDocuments
    .filter((d) => d.uri.scheme === "file")
    .map((d) => ({ path: d.uri.fsPath, text: d.getText(), isDirty: d.isDirty, version: d.version }));
  out("documents.json", { docs });
}

// Every default key binding that uses a key (VS Code's own and extensions'), to check for clashes.
async function keybindings() {
  try {
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.parse("vscode://defaultsettings/keybindings.json"));
    out("keybindings.json", { ok: true, text: doc.getText() });
  } catch (error) {
    out("keybindings.json", { ok: false, error: String(error) });
  }
}

// What the workbench's hover providers say of the first line of app/greet.py (Takeback's is the
// server's textDocument/hover), and what "Takeback: Toggle Line Blame" shows on the active editor.
async function blame() {
  try {
    const folder = vscode.workspace.workspaceFolders[0].uri;
    const uri = vscode.Uri.joinPath(folder, "app", "greet.py");
    const hovers = await vscode.commands.executeCommand("vscode.executeHoverProvider", uri, new vscode.Position(0, 5));
    const texts = (hovers || []).flatMap((h) => h.contents.map((c) => (typeof c === "string" ? c : c.value)));
    const trusted = (hovers || []).flatMap((h) => h.contents.map((c) => (typeof c === "string" ? null : c.isTrusted ?? null)));
    const editor = vscode.window.activeTextEditor;
    const cursorBefore = editor ? editor.selection.active.line : null;
    if (editor) {
      editor.selection = new vscode.Selection(0, 0, 0, 0); // the cursor on the agent's line, as a person puts it
    }
    const toggled = await vscode.commands.executeCommand("takeback.toggleLineBlame");
    const toggledOff = await vscode.commands.executeCommand("takeback.toggleLineBlame");
    out("blame.json", { ok: true, hovers: texts, trusted, toggled, toggledOff, cursorBefore, active: editor ? editor.document.uri.toString() : null });
  } catch (error) {
    out("blame.json", { ok: false, error: String(error && error.stack ? error.stack : error) });
  }
}

exports.activate = (context) => {
  context.subscriptions.push(
    vscode.commands.registerCommand("takebackTestAgent.keybindings", keybindings),
    vscode.commands.registerCommand("takebackTestAgent.run", run),
    vscode.commands.registerCommand("takebackTestAgent.dump", dump),
    vscode.commands.registerCommand("takebackTestAgent.blame", blame),
  );
};
exports.deactivate = () => {};
