-- The scripted session of tests/nvim/test_neovim.py's hunk test, run inside a real headless
-- Neovim after the setup from docs/neovim.md (which defines the global `takeback`): the agent
-- changes two places of the open buffer through takeback/applyEdit, the person adds two lines
-- above them (unsaved), then picks "Take back these lines from turn #1" from
-- vim.lsp.buf.code_action() on the second place (vim.ui.select stubbed), and takes the first
-- back with the documented `:TakebackRevert #1 --hunk PATH:LINE`. Writes what it saw to
-- $TAKEBACK_TEST_OUT as JSON.
local report = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/report.lua")
local R, save, step, text = report.R, report.save, report.step, report.text

local notified = {}
vim.notify = function(message)
  table.insert(notified, message)
end

local changes = 0
vim.lsp.handlers["takeback/timelineChanged"] = function()
  changes = changes + 1
end

-- On 1-based `line`, choose the code action whose title starts with `prefix` and wait for the
-- command it runs to finish; answers the titles offered.
local function choose_code_action(line, prefix)
  local changes_before = changes
  local offered, chosen = nil, false
  vim.ui.select = function(items, opts, on_choice)
    offered = {}
    for i, item in ipairs(items) do
      local title = opts.format_item and opts.format_item(item) or tostring(item)
      table.insert(offered, title)
      if not chosen and title:sub(1, #prefix) == prefix then
        chosen = true
        on_choice(item, i)
      end
    end
    if not chosen then
      on_choice(nil, nil)
    end
  end
  vim.api.nvim_win_set_cursor(0, { line, 0 })
  vim.lsp.buf.code_action()
  assert(vim.wait(10000, function() return offered ~= nil end, 20), "no code actions were offered")
  assert(chosen, "no code action starts with '" .. prefix .. "': " .. table.concat(offered, " | "))
  assert(vim.wait(15000, function() return changes > changes_before end, 20), prefix .. ": the timeline never changed")
  return offered
end

local function main()
  local bufnr = vim.api.nvim_get_current_buf()
  assert(vim.wait(20000, function()
    local client = takeback.client(bufnr)
    return client ~= nil and client.initialized == true
  end, 20), "the Takeback server never attached to the buffer")
  step("attached")

  local uri = vim.uri_from_bufnr(bufnr)
  local function at(line, c1, c2)
    return { start = { line = line, character = c1 }, ["end"] = { line = line, character = c2 } }
  end
  local agent_done = nil
  takeback.request("takeback/applyEdit", {
    label = "tens",
    edit = { changes = { [uri] = { { range = at(1, 11, 12), newText = "10" }, { range = at(5, 11, 12), newText = "20" } } } },
  }, function(result) agent_done = result end)
  assert(vim.wait(15000, function() return agent_done ~= nil end, 20), "takeback/applyEdit did not answer")
  R.after_agent = text(bufnr)
  vim.cmd("write")
  step("agent edit applied and written")

  vim.api.nvim_buf_set_lines(bufnr, 0, 0, false, { "# the person's note", "" }) -- unsaved, above both
  R.after_person = text(bufnr)
  step("person edited")

  R.offered = choose_code_action(8, "Take back these lines from turn #1") -- "    return 20" now
  assert(vim.wait(15000, function() return not text(bufnr):find("return 20", 1, true) end, 20),
    "the take-back did not reach the buffer")
  R.after_action = text(bufnr)
  step("one hunk taken back from the code action")

  R.hints = {
    takeback.hint({ command = "revert", number = 1, hunk = "src/app.py:4", paths = {}, does = "takes back that hunk" }),
    takeback.hint({ command = "revert", number = 12, step = "12.3", onConflict = "skip", paths = { "src/*.py" },
      does = "takes back the clean files" }),
  }
  local before, said = changes, #notified
  vim.cmd("TakebackRevert #1 --hunk src/app.py:4") -- "    return 10" in the buffer now
  assert(vim.wait(15000, function() return changes > before end, 20), ":TakebackRevert --hunk changed nothing")
  assert(vim.wait(15000, function() return not text(bufnr):find("return 10", 1, true) end, 20),
    ":TakebackRevert --hunk did not reach the buffer")
  R.after_command = text(bufnr)
  assert(vim.wait(10000, function() return #notified > said end, 20), ":TakebackRevert said nothing")
  R.command_message = notified[#notified]

  local timeline = nil
  takeback.request("takeback/timeline", {}, function(result) timeline = result end)
  assert(vim.wait(10000, function() return timeline ~= nil end, 20), "takeback/timeline did not answer")
  R.timeline = {}
  for _, entry in ipairs(timeline.entries) do
    table.insert(R.timeline, string.format("#%d %s %s %s", entry.number, entry.kind, entry.state, entry.label or ""))
  end
  step("done")
end

local ok, err = xpcall(main, debug.traceback)
if not ok then
  R.error = tostring(err)
end
save()
vim.cmd("qa!")
