/** The browser's side of the API: the user's token (kept in localStorage) and JSON requests. */
import { routeRequest, type ApiResponse, type ApiRoute } from '../src/api/contract.js';

const TOKEN_KEY = 'goodput-token';

export function getToken(): string | null {
  return localStorage.getItem(TOKEN_KEY);
}

export function setToken(token: string | null): void {
  if (token === null) localStorage.removeItem(TOKEN_KEY);
  else localStorage.setItem(TOKEN_KEY, token);
}

/** An error answer of the API (`{"error": {"code", "message"}}`). */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  constructor(status: number, code: string, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/** Called when the server refuses the token (401): the app shows the login form again. */
let onUnauthorized: () => void = () => {};
export function whenUnauthorized(f: () => void): void {
  onUnauthorized = f;
}

/** One request with the bearer token; throws ApiError on an error answer. */
export async function request(method: string, path: string): Promise<Response> {
  const token = getToken();
  const res = await fetch(path, { method, headers: token ? { authorization: `Bearer ${token}` } : {} });
  if (!res.ok) {
    let code = 'E_HTTP';
    let message = `HTTP ${res.status}`;
    try {
      const body = (await res.json()) as { error?: { code: string; message: string } };
      if (body.error) ({ code, message } = body.error);
    } catch {
      // not JSON: keep the status
    }
    if (res.status === 401) onUnauthorized();
    throw new ApiError(res.status, code, message);
  }
  return res;
}

export async function getJson<T>(path: string): Promise<T> {
  return (await (await request('GET', path)).json()) as T;
}

export async function postJson<T>(path: string): Promise<T> {
  return (await (await request('POST', path)).json()) as T;
}

/** A body-less route of the API contract (src/api/contract.ts), typed by it: the same contract as the CLI's client. */
export async function callApi<R extends ApiRoute>(
  route: R,
  params: Readonly<Record<string, string>> = {},
): Promise<ApiResponse<R>> {
  const { method, path } = routeRequest(route, params);
  return (await (await request(method, path)).json()) as ApiResponse<R>;
}

/**
 * The login code of a link from `goodput dashboard` (`#login=CODE`), taken out of the address
 * bar and the history at once (replaced by the jobs page), so that it is never bookmarked,
 * shared or shown; undefined when the page was not opened by such a link.
 */
export function takeLoginCode(): string | undefined {
  const match = /^#login=([A-Za-z0-9_-]+)$/.exec(location.hash);
  if (!match) return undefined;
  history.replaceState(null, '', `${location.pathname}${location.search}#/jobs`);
  return match[1];
}

/** Trades a login code (once) for the token it stands for; throws ApiError when it expired or was used. */
export async function redeemLoginCode(code: string): Promise<string> {
  const res = await fetch('/dash/login', { method: 'POST', headers: { authorization: `Login ${code}` } });
  const body = (await res.json()) as { token?: string; error?: { code: string; message: string } };
  if (!res.ok || typeof body.token !== 'string')
    throw new ApiError(res.status, body.error?.code ?? 'E_HTTP', body.error?.message ?? `HTTP ${res.status}`);
  return body.token;
}
