/** Login with an API token (the same tokens as the CLI: `goodput` admin token or one from POST /v1/tokens). */
import { useState } from 'preact/hooks';
import type { WhoAmI } from '../../src/dashboard/types.js';
import { getJson, setToken } from '../api.js';

export function LoginPage(p: { onLogin: (me: WhoAmI) => void }) {
  const [token, setValue] = useState('');
  const [error, setError] = useState('');
  const submit = async (e: Event) => {
    e.preventDefault();
    setToken(token.trim());
    try {
      p.onLogin(await getJson<WhoAmI>('/dash/me'));
    } catch (err) {
      setToken(null);
      setError((err as Error).message);
    }
  };
  return (
    <form class="login" onSubmit={(e) => void submit(e)}>
      <h2>Log in to the goodput dashboard</h2>
      <p class="muted">
        Paste your API token: an admin's is in the server's data directory (<code>admin-token</code>); an admin creates user tokens with <code>POST /v1/tokens</code>.
      </p>
      <input type="password" name="token" autoComplete="off" placeholder="gpu_… or gpa_…" value={token} onInput={(e) => setValue((e.target as HTMLInputElement).value)} autoFocus />
      <button type="submit">Log in</button>
      {error && <div class="error" role="alert">{error}</div>}
    </form>
  );
}
