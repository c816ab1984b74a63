-- The scripted session of tests/nvim/test_neovim.py's hover test, run inside a real headless
-- Neovim after the setup from docs/neovim.md (which defines the global `takeback`): an agent
-- changes line 2 of the open buffer through takeback/applyEdit, then the person asks who wrote
-- it: a textDocument/hover request from the real client (vim.lsp.buf_request_sync), and
-- vim.lsp.buf.hover(), whose floating window's lines are read. Writes what it saw to
-- $TAKEBACK_TEST_OUT as JSON.
local report = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/report.lua")
local R, save, step = report.R, report.save, report.step

local function floating_lines()
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_config(win).relative ~= "" then
      return vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(win), 0, -1, false)
    end
  end
  return nil
end

local function main()
  local bufnr = vim.api.nvim_get_current_buf()
  assert(vim.wait(20000, function()
    local client = takeback.client(bufnr)
    return client ~= nil and client.initialized == true
  end, 20), "the Takeback server never attached to the buffer")
  R.hover_provider = takeback.client(bufnr).server_capabilities ~= nil
    and takeback.client(bufnr).server_capabilities.hoverProvider == true
    or (takeback.client(bufnr).resolved_capabilities or {}).hover == true
  step("attached")

  local uri = vim.uri_from_bufnr(bufnr)
  local agent_done = nil
  takeback.request("takeback/applyEdit", {
    label = "Make the answers ten times bigger <b>now</b>", agent = "claude-code",
    edit = { changes = { [uri] = { { range = { start = { line = 1, character = 11 }, ["end"] = { line = 1, character = 12 } }, newText = "10" } } } },
  }, function(result) agent_done = result end)
  assert(vim.wait(15000, function() return agent_done ~= nil end, 20), "takeback/applyEdit did not answer")
  step("agent edit applied")

  local params = { textDocument = { uri = uri }, position = { line = 1, character = 6 } }
  local answers = vim.lsp.buf_request_sync(bufnr, "textDocument/hover", params, 15000) or {}
  for _, answer in pairs(answers) do
    if answer.result and answer.result.contents then
      R.hover = answer.result.contents.value
    end
  end
  local before = vim.lsp.buf_request_sync(bufnr, "textDocument/hover",
    { textDocument = { uri = uri }, position = { line = 0, character = 1 } }, 15000) or {}
  for _, answer in pairs(before) do
    if answer.result and answer.result.contents then
      R.hover_line1 = answer.result.contents.value
    end
  end
  step("hover requested")

  vim.api.nvim_win_set_cursor(0, { 2, 6 })
  vim.lsp.buf.hover()
  assert(vim.wait(15000, function() return floating_lines() ~= nil end, 20), "vim.lsp.buf.hover() opened no window")
  R.float = floating_lines()
  step("done")
end

local ok, err = xpcall(main, debug.traceback)
if not ok then
  R.error = tostring(err)
end
save()
vim.cmd("qa!")
