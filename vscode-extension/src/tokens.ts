// Tokens for remote sessions (an agent started with --token, a strata-dap --listen off
// loopback): read from a file the configuration names, or asked for once and kept in VS Code's
// SecretStorage, so that launch.json never holds one in clear unless the user puts it there.
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

export interface SecretStore {
  get(key: string): PromiseLike<string | undefined>;
  store(key: string, value: string): PromiseLike<void>;
  delete(key: string): PromiseLike<void>;
}
// Asks the user (a password box); undefined when dismissed.
export type AskToken = (question: string) => PromiseLike<string | undefined>;
export type TokenDeps = { secrets: SecretStore; ask: AskToken; baseDir?: string };

export const SECRET_PREFIX = 'strata.token:';

export class TokenError extends Error {}

export function isLoopback(host: string): boolean {
  if (host === 'localhost') return true;
  if (net.isIPv4(host)) return host.startsWith('127.');
  if (net.isIPv6(host)) return host === '::1' || host.toLowerCase().startsWith('::ffff:127.');
  return false;
}

// The token file's first line, as strata-dap --token-file and python -m strata read it.
export function readTokenFile(file: string, baseDir?: string): string {
  const p = path.isAbsolute(file) || !baseDir ? file : path.join(baseDir, file);
  let text: string;
  try {
    text = fs.readFileSync(p, 'utf8');
  } catch (e) {
    throw new TokenError(`cannot read the token file ${p}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  const token = text.split('\n')[0].trim();
  if (!token) throw new TokenError(`the token file ${p} holds no token (its first line is empty)`);
  if (/\s/.test(token)) throw new TokenError(`the token file ${p}: a token has no spaces`);
  return token;
}

export function secretKey(kind: 'agent' | 'adapter', host: string, port: number): string {
  return `${SECRET_PREFIX}${kind}:${host}:${port}`;
}

// One token: from `tokenFile`, else stored, else asked (and stored). `required` false: none is
// needed (loopback) unless a file names one.
export async function obtainToken(kind: 'agent' | 'adapter', where: { host: string; port: number },
                                  tokenFile: unknown, required: boolean, deps: TokenDeps): Promise<string | undefined> {
  if (typeof tokenFile === 'string' && tokenFile) return readTokenFile(tokenFile, deps.baseDir);
  if (tokenFile !== undefined && typeof tokenFile !== 'string')
    throw new TokenError('"tokenFile" is the path of a file whose first line is the token');
  if (!required) return undefined;
  const key = secretKey(kind, where.host, where.port);
  const stored = await deps.secrets.get(key);
  if (stored) return stored;
  const question = kind === 'agent'
    ? `Token of the Strata agent at ${where.host}:${where.port} (what python -m strata was given with --token or STRATA_TOKEN)`
    : `Token of strata-dap --listen at ${where.host}:${where.port} (its --token, or the file ~/.config/strata/token-${where.port} there)`;
  const answer = (await deps.ask(question))?.trim();
  if (!answer) return undefined;
  if (/\s/.test(answer)) throw new TokenError('a Strata token has no spaces');
  await deps.secrets.store(key, answer);
  return answer;
}

// Where an attach's agent is: connect {host, port}, listen {host, port}, or the older host/port.
export function agentEndpoint(config: Record<string, unknown>): { host: string; port: number } | undefined {
  const where = (config.connect ?? config.listen) as { host?: string; port?: number } | undefined;
  if (config.processId !== undefined || config.processIds !== undefined || config.processTree !== undefined ||
      config.nodes !== undefined) return undefined;
  if (!where && config.host === undefined && config.port === undefined) return undefined;
  return { host: where?.host ?? (config.host as string | undefined) ?? '127.0.0.1',
           port: where?.port ?? (config.port as number | undefined) ?? 5678 };
}

// resolveDebugConfigurationWithSubstitutedVariables: an attach to an agent gets its token here,
// in memory only. Undefined: the user dismissed the question (the session does not start).
export async function withAgentToken(config: Record<string, unknown>, deps: TokenDeps):
    Promise<Record<string, unknown> | undefined> {
  if (config.request !== 'attach' || typeof config.token === 'string') return config;
  const where = agentEndpoint(config);
  if (!where) return config;
  const token = await obtainToken('agent', where, config.tokenFile, !isLoopback(where.host), deps);
  if (token === undefined) {
    if (config.tokenFile === undefined && !isLoopback(where.host)) return undefined;
    return config;
  }
  const { tokenFile: _, ...rest } = config;
  return { ...rest, token };
}

// The token for `adapterServer` (a strata-dap --listen elsewhere); undefined on loopback with no file.
export async function adapterServerToken(server: { host?: string; port?: number; tokenFile?: unknown },
                                         deps: TokenDeps): Promise<{ host: string; port: number; token?: string } | undefined> {
  const host = server.host ?? '127.0.0.1';
  const port = server.port;
  if (typeof port !== 'number' || port < 1 || port > 65535)
    throw new TokenError('"adapterServer.port" is the TCP port strata-dap --listen listens on');
  const required = !isLoopback(host);
  const token = await obtainToken('adapter', { host, port }, server.tokenFile, required, deps);
  if (required && token === undefined) return undefined;
  return { host, port, token };
}

export async function forgetTokens(secrets: SecretStore, keys: string[]): Promise<number> {
  let n = 0;
  for (const k of keys.filter((k) => k.startsWith(SECRET_PREFIX))) {
    await secrets.delete(k);
    ++n;
  }
  return n;
}
