-- Loads editors/nvim/lua/strata/dap.lua in headless Neovim and writes what its setup()
-- registers, as JSON, to $STRATA_NVIM_OUT (run by check_editors.py).
--
-- nvim-dap is not packaged in Debian, so `dap` and `dap.utils` are minimal tables on
-- package.loaded: what setup() writes into them is what nvim-dap would read. Each configuration
-- is then resolved as nvim-dap resolves it before a session: function values called (the prompts
-- answered from $STRATA_NVIM_ANSWERS), `${file}` and `${workspaceFolder}` expanded (the buffer
-- open is the test's script), then the adapter's enrich_config applied.
local out_path = assert(os.getenv('STRATA_NVIM_OUT'), 'STRATA_NVIM_OUT is not set')
local answers = vim.fn.json_decode(os.getenv('STRATA_NVIM_ANSWERS') or '{}')

local function autovivify()
  return setmetatable({}, {
    __index = function(t, k)
      rawset(t, k, {})
      return rawget(t, k)
    end,
  })
end

local ABORT = { 'ABORT' }
local runs = {}
package.loaded['dap'] = {
  adapters = {},
  configurations = {},
  listeners = { before = autovivify(), after = autovivify() },
  ABORT = ABORT,
  run = function(config) table.insert(runs, config) end,
}
package.loaded['dap.utils'] = {
  pick_process = function() return answers.pid end,
}

local notes = {}
vim.notify = function(msg, level) table.insert(notes, { msg = msg, level = level }) end
local prompts = {}
vim.fn.input = function(opts)
  local prompt = type(opts) == 'table' and opts.prompt or opts
  table.insert(prompts, prompt)
  local answer = answers.input and answers.input[prompt]
  if answer == nil then
    return ''
  end
  return answer
end

-- A copy of table `t` with `f` applied to each value.
local function map_values(t, f)
  local copy = {}
  for k, v in pairs(t) do
    copy[k] = f(v)
  end
  return copy
end

local function plain(value)
  local t = type(value)
  if t == 'function' then
    return '<function>'
  elseif t == 'table' then
    if value == ABORT then
      return '<dap.ABORT>'
    end
    return map_values(value, plain)
  end
  return value
end

local function expand(value)
  if type(value) == 'string' then
    value = value:gsub('${file}', function() return vim.fn.expand('%:p') end)
    value = value:gsub('${workspaceFolder}', function() return vim.fn.getcwd() end)
    return value
  elseif type(value) == 'table' and value ~= ABORT then
    return map_values(value, expand)
  end
  return value
end

local result = {}
local ok, err = pcall(function()
  local strata = require('strata.dap')
  strata.setup({ adapter_path = os.getenv('STRATA_DAP'), python = answers.python })
  result.setup_notifications = vim.deepcopy(notes)
  local dap = package.loaded['dap']
  result.adapter_kind = type(dap.adapters.strata)
  local adapter = dap.adapters.strata
  if type(adapter) == 'function' then
    adapter(function(a) adapter = a end, { type = 'strata', request = 'launch', name = 'probe' })
  end
  result.adapter = plain(adapter)
  result.listeners = vim.tbl_keys(rawget(dap.listeners.before, 'event_gpuActivity') or {})
  result.configurations = {}
  for ft, configs in pairs(dap.configurations) do
    result.configurations[ft] = {}
    for _, config in ipairs(configs) do
      local resolved = {}
      for k, v in pairs(config) do
        if type(v) == 'function' then
          v = v()
        end
        resolved[k] = expand(v)
      end
      local enriched = nil
      local aborted = false
      for _, v in pairs(resolved) do
        if v == ABORT then
          aborted = true
        end
      end
      if aborted then
        enriched = '<dap.ABORT>'
      else
        adapter.enrich_config(resolved, function(c) enriched = c end)
      end
      table.insert(result.configurations[ft], {
        raw = plain(config),
        resolved = enriched and plain(enriched) or vim.NIL,
      })
    end
  end
  -- The interpreter given to setup() goes to Python launches only.
  local saved_python = strata.opts.python
  strata.opts.python = '/opt/py/bin/python3'
  result.enrich_python = {}
  for _, config in ipairs({
    { type = 'strata', request = 'launch', name = 'py', program = '/x/train.py' },
    { type = 'strata', request = 'launch', name = 'mod', module = 'pkg.train' },
    { type = 'strata', request = 'launch', name = 'native', program = '/x/a.out' },
    { type = 'strata', request = 'launch', name = 'own', program = '/x/t.py', python = '/usr/bin/python3' },
    { type = 'strata', request = 'attach', name = 'pid', processId = 1 },
  }) do
    strata.enrich_config(config, function(c) result.enrich_python[config.name] = c.python or vim.NIL end)
  end
  strata.opts.python = saved_python
  -- A token file that cannot be read stops the session, with the reason.
  local started = false
  strata.enrich_config({ type = 'strata', request = 'attach', name = 'bad', connect = { port = 1 },
    tokenFile = '/nonexistent/token' }, function() started = true end)
  result.bad_token_started = started
  result.bad_token_said = notes[#notes] and notes[#notes].msg or vim.NIL
  -- Without adapter_path and with no strata-dap on PATH: the error says how to install it.
  local saved = vim.env.PATH
  vim.env.PATH = '/nonexistent'
  local _, missing = strata.find_adapter({})
  vim.env.PATH = saved
  result.missing_adapter = missing or vim.NIL
  -- The helpers start sessions through dap.run.
  strata.attach(answers.pid, { native = true })
  strata.open_trace('trace.json')
  result.runs = plain(runs)
end)
result.ok = ok
result.error = ok and vim.NIL or tostring(err)
result.notifications = notes
result.prompts = prompts
result.nvim_version = vim.version()

local f = assert(io.open(out_path, 'w'))
f:write(vim.fn.json_encode(result))
f:close()
vim.cmd('qall!')
