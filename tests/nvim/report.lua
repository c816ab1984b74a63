-- What every scripted Neovim session of tests/nvim/ shares: the report it writes to
-- $TAKEBACK_TEST_OUT as JSON (R, with the steps reached so far: a session that stops midway
-- says where), and a buffer's text. Loaded by each driver with dofile, next to it.
local M = {}
local out = assert(os.getenv("TAKEBACK_TEST_OUT"))
M.R = { steps = {} }

function M.save()
  local f = assert(io.open(out, "w"))
  f:write(vim.fn.json_encode(M.R))
  f:close()
end

function M.step(name)
  table.insert(M.R.steps, name)
  M.save()
end

function M.text(bufnr)
  return table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), "\n") .. "\n"
end

return M
