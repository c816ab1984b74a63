-- The scripted session of tests/nvim/test_neovim.py, run inside a real headless Neovim after the
-- setup from docs/neovim.md (which defines the global `takeback`). It plays the agent (an edit
-- through takeback/applyEdit), then the person (an edit in the same buffer, left unsaved), then
-- picks "Undo agent turn" and "Redo agent turn" from vim.lsp.buf.code_action() with
-- vim.ui.select stubbed, and writes what it saw to $TAKEBACK_TEST_OUT as JSON.
local report = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/report.lua")
local R, save, step, text = report.R, report.save, report.step, report.text

local function read(path)
  local f = io.open(path, "r")
  if not f then
    return vim.NIL
  end
  local s = f:read("*a")
  f:close()
  return s
end

-- What the documented commands tell the person (vim.notify), newest last.
local notified = {}
vim.notify = function(message)
  table.insert(notified, message)
end

-- The server says when the timeline changed: an operation is complete when that arrives.
local changes = 0
vim.lsp.handlers["takeback/timelineChanged"] = function()
  changes = changes + 1
end

-- Choose the code action whose title starts with `prefix`, wait for the command it runs to
-- finish; answers the titles offered.
local function choose_code_action(bufnr, prefix)
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
  vim.api.nvim_win_set_cursor(0, { 2, 0 })
  vim.lsp.buf.code_action()
  assert(vim.wait(10000, function() return offered ~= nil end, 20), "no code actions were offered")
  assert(chosen, "no code action starts with '" .. prefix .. "': " .. table.concat(offered, " | "))
  assert(vim.wait(15000, function() return changes > changes_before end, 20), prefix .. ": the timeline never changed")
  return offered
end

local function main()
  local bufnr = vim.api.nvim_get_current_buf()
  local path = vim.api.nvim_buf_get_name(bufnr)
  local root = vim.fn.fnamemodify(path, ":h:h")
  local util = root .. "/src/util.py"
  R.nvim = tostring(vim.version().major) .. "." .. tostring(vim.version().minor)
  assert(vim.wait(20000, function()
    local client = takeback.client(bufnr)
    return client ~= nil and client.initialized == true
  end, 20), "the Takeback server never attached to the buffer")
  step("attached")

  -- The agent: one batch touching the open buffer (line 2) and a file that is not open.
  local agent_done = nil
  takeback.request("takeback/applyEdit", {
    label = "return ten",
    edit = { changes = {
      [vim.uri_from_bufnr(bufnr)] = { { range = { start = { line = 1, character = 11 }, ["end"] = { line = 1, character = 12 } }, newText = "10" } },
      [vim.uri_from_fname(util)] = { { range = { start = { line = 1, character = 15 }, ["end"] = { line = 1, character = 16 } }, newText = "3" } },
    } },
  }, function(result) agent_done = result end)
  assert(vim.wait(15000, function() return agent_done ~= nil end, 20), "takeback/applyEdit did not answer")
  R.apply_applied = agent_done.applied
  R.after_agent = text(bufnr)
  vim.cmd("write") -- the agent's change reaches the disk the way edits do in Neovim
  R.disk_after_agent = read(path)
  R.util_after_agent = read(util)
  step("agent edit applied and written")

  -- The person edits the same buffer elsewhere (line 5) and does not save.
  vim.api.nvim_buf_set_lines(bufnr, 4, 5, false, { "def other():  # the person's edit" })
  R.after_person = text(bufnr)
  step("person edited")

  R.undo_offered = choose_code_action(bufnr, "Undo agent turn #1")
  assert(vim.wait(15000, function() return not text(bufnr):find("return 10", 1, true) end, 20), "undo did not reach the buffer")
  R.after_undo = text(bufnr)
  R.util_after_undo = read(util)
  vim.cmd("write")
  R.disk_after_undo = read(path)
  step("undone")

  R.redo_offered = choose_code_action(bufnr, "Redo agent turn #1")
  assert(vim.wait(15000, function() return text(bufnr):find("return 10", 1, true) ~= nil end, 20), "redo did not reach the buffer")
  R.after_redo = text(bufnr)
  R.util_after_redo = read(util)
  vim.cmd("write")
  R.disk_after_redo = read(path)
  step("redone")

  -- The documented user commands: :TakebackUndo, then :TakebackTimeline fills the quickfix list.
  local before_command = changes
  vim.cmd("TakebackUndo")
  assert(vim.wait(15000, function() return changes > before_command end, 20), ":TakebackUndo changed nothing")
  R.after_command_undo = text(bufnr)
  assert(vim.wait(10000, function() return #notified > 0 end, 20), ":TakebackUndo said nothing")
  R.command_undo_message = notified[#notified]
  -- The person throws the undo away (:e!): the disk keeps the agent's change; :TakebackStatus
  -- says so and :TakebackSave writes what the undo applied.
  R.disk_before_discard = read(path)
  vim.cmd("edit!")
  R.after_discard = text(bufnr)
  local said = #notified
  vim.cmd("TakebackStatus")
  assert(vim.wait(10000, function() return #notified > said end, 20), ":TakebackStatus said nothing")
  R.status_after_discard = notified[#notified]
  said = #notified
  vim.cmd("TakebackSave")
  assert(vim.wait(10000, function() return #notified > said end, 20), ":TakebackSave said nothing")
  R.save_message = notified[#notified]
  R.disk_after_save = read(path)
  R.buffer_after_save = text(bufnr)
  step("discarded and saved")

  vim.cmd("TakebackTimeline")
  assert(vim.wait(10000, function() return #vim.fn.getqflist() > 0 end, 20), ":TakebackTimeline filled no quickfix list")
  R.quickfix = {}
  for _, item in ipairs(vim.fn.getqflist()) do
    table.insert(R.quickfix, item.text)
  end
  vim.cmd("cclose")
  step("user commands")

  local timeline = nil
  takeback.request("takeback/timeline", {}, function(result) timeline = result end)
  assert(vim.wait(10000, function() return timeline ~= nil end, 20), "takeback/timeline did not answer")
  R.timeline = {}
  for _, entry in ipairs(timeline.entries) do
    table.insert(R.timeline, string.format("#%d %s %s", entry.number, entry.kind, entry.state))
  end
  step("done")
end

local ok, err = xpcall(main, debug.traceback)
if not ok then
  R.error = tostring(err)
end
save()
vim.cmd("qa!")
