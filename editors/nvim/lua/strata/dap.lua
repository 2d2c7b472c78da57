-- Strata for nvim-dap: registers the `strata` adapter (strata-dap over stdio) and launch and
-- attach configurations for Python, C, C++ and CUDA files.
--
--   require('strata.dap').setup()                       -- strata-dap from PATH
--   require('strata.dap').setup({ adapter_path = '/opt/strata/bin/strata-dap' })
--
-- Needs nvim-dap. Uses only the Neovim API of 0.7 (Debian 12 ships 0.7.2).

local M = {}

local FILETYPES = { 'python', 'c', 'cpp', 'cuda' }

local INSTALL_HINT = 'Install Strata (the .deb puts /usr/bin/strata-dap; '
  .. '`cmake --install build/release --prefix PREFIX` puts PREFIX/bin/strata-dap; '
  .. '`pip install strata-*.whl` puts it in the venv\'s bin/) and make sure it is on PATH, '
  .. 'or pass its path: require(\'strata.dap\').setup({ adapter_path = \'/path/to/strata-dap\' })'

-- What setup() was given, with the defaults filled in.
M.opts = nil

local default_opts = {
  -- strata-dap to start; nil: `strata-dap` found on PATH when a session starts.
  adapter_path = nil,
  -- The interpreter of Python launches: a path, { path, flags... }, or a function returning one.
  -- nil: the active virtual environment's python ($VIRTUAL_ENV, $CONDA_PREFIX), else the
  -- adapter's own choice (the newest python3.N, N >= 12, on PATH or in pyenv's versions).
  python = nil,
  -- Append Strata's configurations to dap.configurations.<filetype>.
  include_configs = true,
  -- The filetypes that get them.
  filetypes = FILETYPES,
  -- `console` of Python launches (internalConsole, integratedTerminal, externalTerminal);
  -- nil: the adapter's default, the Debug Console (nvim-dap's REPL).
  console = nil,
  -- strata-dap writes every message in and out to this file (`--log FILE`).
  log_file = nil,
}

local function notify(msg, level)
  vim.notify('strata.dap: ' .. msg, level or vim.log.levels.ERROR)
end

local function is_executable(path)
  return path ~= nil and path ~= '' and vim.fn.executable(path) == 1
end

-- The strata-dap to start, or nil and the reason.
function M.find_adapter(opts)
  opts = opts or M.opts or default_opts
  if opts.adapter_path and opts.adapter_path ~= '' then
    local path = vim.fn.expand(opts.adapter_path)
    if is_executable(path) then
      return path
    end
    return nil, string.format('adapter_path %s is not an executable file. %s', path, INSTALL_HINT)
  end
  local found = vim.fn.exepath('strata-dap')
  if found ~= '' then
    return found
  end
  return nil, 'strata-dap was not found on PATH. ' .. INSTALL_HINT
end

local function venv_python()
  for _, var in ipairs({ 'VIRTUAL_ENV', 'CONDA_PREFIX' }) do
    local prefix = os.getenv(var)
    if prefix and prefix ~= '' and is_executable(prefix .. '/bin/python') then
      return prefix .. '/bin/python'
    end
  end
  return nil
end

local function python_for_launch(opts)
  local python = opts.python
  if type(python) == 'function' then
    python = python()
  end
  if python == nil or python == '' then
    return venv_python()
  end
  if type(python) == 'string' then
    return vim.fn.expand(python)
  end
  return python
end

local function is_python_launch(config)
  if config.request ~= 'launch' then
    return false
  end
  if config.module ~= nil then
    return true
  end
  return type(config.program) == 'string' and config.program:match('%.py$') ~= nil
end

-- The token file's first line, as strata-dap --token-file and python -m strata read it.
local function read_token(file)
  local path = vim.fn.expand(file)
  local f, err = io.open(path, 'r')
  if not f then
    return nil, string.format('cannot read the token file %s: %s', path, err or 'unknown error')
  end
  local line = f:read('*l') or ''
  f:close()
  local token = line:gsub('^%s+', ''):gsub('%s+$', '')
  if token == '' then
    return nil, string.format('the token file %s holds no token (its first line is empty)', path)
  end
  if token:find('%s') then
    return nil, string.format('the token file %s: a token has no spaces', path)
  end
  return token
end

-- nvim-dap calls this with every configuration of type `strata` (its variables expanded) before
-- the session starts: a Python launch gets its interpreter, `tokenFile` becomes `token` (the
-- token read here, never written into a configuration). An error stops the session.
function M.enrich_config(config, on_config)
  local opts = M.opts or default_opts
  local final = vim.deepcopy(config)
  if final.python == nil and is_python_launch(final) then
    final.python = python_for_launch(opts)
  end
  if final.tokenFile ~= nil then
    if type(final.tokenFile) ~= 'string' or final.tokenFile == '' then
      notify('"tokenFile" is the path of a file whose first line is the token')
      return
    end
    if final.token == nil then
      local token, err = read_token(final.tokenFile)
      if not token then
        notify(err)
        return
      end
      final.token = token
    end
    final.tokenFile = nil
  end
  on_config(final)
end

-- The adapter table for a session, or nil (the reason told through vim.notify).
function M.adapter()
  local opts = M.opts or default_opts
  local command, err = M.find_adapter(opts)
  if not command then
    notify(err)
    return nil
  end
  local args = { '--stdio' }
  if opts.log_file then
    table.insert(args, '--log')
    table.insert(args, vim.fn.expand(opts.log_file))
  end
  return {
    type = 'executable',
    command = command,
    args = args,
    enrich_config = M.enrich_config,
    options = { initialize_timeout_sec = 10 },
  }
end

-- Prompts. An empty answer gives dap.ABORT where nvim-dap has it (the session does not start).
local function abort()
  local ok, dap = pcall(require, 'dap')
  return ok and dap.ABORT or nil
end

local function ask(prompt, default, completion)
  local answer = vim.fn.input({ prompt = prompt, default = default or '', completion = completion })
  if answer == nil or answer == '' then
    return nil
  end
  return answer
end

-- Words split on blanks; a word in single or double quotes keeps its blanks.
local function split_args(text)
  local args, word, quote, has_word = {}, {}, nil, false
  for c in text:gmatch('.') do
    if quote then
      if c == quote then
        quote = nil
      else
        table.insert(word, c)
      end
    elseif c == '"' or c == "'" then
      quote, has_word = c, true
    elseif c:match('%s') then
      if has_word then
        table.insert(args, table.concat(word))
        word, has_word = {}, false
      end
    else
      table.insert(word, c)
      has_word = true
    end
  end
  if has_word then
    table.insert(args, table.concat(word))
  end
  return args
end

local function ask_args()
  return split_args(vim.fn.input('Arguments: '))
end

local function ask_program()
  return ask('Program: ', vim.fn.getcwd() .. '/', 'file') or abort()
end

local function ask_module()
  -- The current file as a module name (pkg/mod.py -> pkg.mod), relative to the working directory.
  local guess = vim.fn.expand('%:.:r:gs?/?.?')
  if vim.bo.filetype ~= 'python' then
    guess = ''
  end
  return ask('Module: ', guess) or abort()
end

local function ask_trace()
  -- torch.profiler/Kineto .json or .json.gz, an Nsight Systems SQLite export, a Strata store.
  return ask('GPU trace file: ', vim.fn.getcwd() .. '/', 'file') or abort()
end

local function pick_process()
  return require('dap.utils').pick_process()
end

local function ask_connect()
  local host = ask('Agent host [127.0.0.1]: ') or '127.0.0.1'
  local port = tonumber(ask('Agent port [5678]: ') or '5678')
  if not port then
    return abort()
  end
  return { host = host, port = port }
end

local function ask_token_file()
  -- On loopback an agent needs no token: an empty answer sends none.
  return ask('Token file (empty: none): ', '', 'file')
end

-- A configuration of the adapter: `request` (launch or attach), its name, its fields.
local function configuration(request, name, fields)
  local config = { type = 'strata', request = request, name = name }
  for k, v in pairs(fields) do
    config[k] = v
  end
  return config
end

local function launch(name, fields)
  return configuration('launch', name, fields)
end

-- A Python launch: `console` from setup() applies (a native program's output always goes to
-- the Debug Console while it is debugged).
local function python_launch(name, fields, opts)
  local config = launch(name, fields)
  config.console = opts.console
  return config
end

local function attach(name, fields)
  return configuration('attach', name, fields)
end

-- The configurations setup() appends, by filetype (a new table each call).
function M.configurations(opts)
  opts = vim.tbl_extend('force', default_opts, opts or {})
  local trace = launch('Strata: open a GPU trace', { trace = ask_trace })
  local attach_pid = attach('Strata: attach to a process', { processId = pick_process })
  local python = {
    python_launch('Strata: launch file', { program = '${file}', cwd = '${workspaceFolder}' }, opts),
    python_launch('Strata: launch file with arguments',
      { program = '${file}', args = ask_args, cwd = '${workspaceFolder}' }, opts),
    python_launch('Strata: launch module',
      { module = ask_module, cwd = '${workspaceFolder}' }, opts),
    launch('Strata: launch file (Python + C/C++)',
      { program = '${file}', cwd = '${workspaceFolder}', native = true }),
    python_launch('Strata: launch file with GPU collection',
      { program = '${file}', cwd = '${workspaceFolder}', gpu = 'stacks' }, opts),
    attach_pid,
    attach('Strata: attach to a process (Python + C/C++)',
      { processId = pick_process, native = true }),
    attach('Strata: connect to an agent (python -m strata --listen)',
      { connect = ask_connect, tokenFile = ask_token_file }),
    trace,
  }
  local native = {
    launch('Strata: launch program', { program = ask_program, cwd = '${workspaceFolder}' }),
    launch('Strata: launch program with arguments',
      { program = ask_program, args = ask_args, cwd = '${workspaceFolder}' }),
    attach_pid,
    trace,
  }
  local cuda = vim.deepcopy(native)
  table.insert(cuda, 3, launch('Strata: launch program with GPU collection',
    { program = ask_program, cwd = '${workspaceFolder}', gpu = 'stacks' }))
  return { python = python, c = native, cpp = vim.deepcopy(native), cuda = cuda }
end

local function load_dap()
  local ok, dap = pcall(require, 'dap')
  if not ok then
    notify('nvim-dap is required (https://github.com/mfussenegger/nvim-dap)')
    return nil
  end
  return dap
end

-- Starts a session through nvim-dap, when it is there.
local function run(config)
  local dap = load_dap()
  if dap then
    dap.run(config)
  end
end

--- Registers dap.adapters.strata and, with include_configs, Strata's configurations.
---@param opts table|nil see default_opts above
function M.setup(opts)
  M.opts = vim.tbl_extend('force', default_opts, opts or {})
  local dap = load_dap()
  if not dap then
    return
  end
  -- Said once now; a session started later looks again (a venv activated since, say).
  local _, err = M.find_adapter(M.opts)
  if err then
    notify(err)
  end
  dap.adapters.strata = function(callback, _config)
    local adapter = M.adapter()
    if adapter then
      callback(adapter)
    end
  end
  -- The adapter's custom event (GPU data changed, every 100 ms while a program collects):
  -- handled, so that nvim-dap does not log each one as unknown.
  if dap.listeners and dap.listeners.before then
    dap.listeners.before['event_gpuActivity']['strata'] = function() end
  end
  if M.opts.include_configs then
    local all = M.configurations(M.opts)
    for _, ft in ipairs(M.opts.filetypes) do
      if all[ft] then
        dap.configurations[ft] = dap.configurations[ft] or {}
        for _, config in ipairs(all[ft]) do
          table.insert(dap.configurations[ft], config)
        end
      end
    end
  end
end

--- Attaches to a running process: require('strata.dap').attach(1234, { native = true }).
--- Python (CPython 3.10+) or native; `native` with a Python process debugs its C/C++ too.
function M.attach(pid, opts)
  opts = opts or {}
  pid = tonumber(pid)
  if not pid then
    notify('attach: give the pid of a running process')
    return
  end
  run(attach(string.format('Strata: attach to %d', pid),
    { processId = pid, native = opts.native or nil, justMyCode = opts.justMyCode }))
end

--- Opens a GPU trace with no program: require('strata.dap').open_trace('trace.pt.trace.json.gz').
function M.open_trace(path, opts)
  opts = opts or {}
  run(launch('Strata: GPU trace', {
    trace = vim.fn.fnamemodify(vim.fn.expand(path), ':p'),
    gpuStore = opts.gpuStore,
  }))
end

return M
