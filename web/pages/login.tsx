/** Login: a link from `goodput dashboard` lands here logged in; otherwise an API token pasted (the CLI's tokens). */
import { useState } from 'preact/hooks';
import type { WhoAmI } from '../../src/dashboard/types.js';
import { getJson, setToken } from '../api.js';

export function LoginPage(p: { onLogin: (me: WhoAmI) => void; error?: string }) {
  const [token, setValue] = useState('');
  const [error, setError] = useState(p.error ?? '');
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
        Run <code>goodput dashboard</code> where you use the CLI: it prints a link that logs this browser in. Or paste
        an API token: an admin's is in the server's data directory (<code>admin-token</code>); an admin creates user
        tokens with <code>goodput token create --user NAME</code>.
      </p>
      <input
        type="password"
        name="token"
        autoComplete="off"
        placeholder="gpu_… or gpa_…"
        value={token}
        onInput={(e) => setValue((e.target as HTMLInputElement).value)}
        autoFocus
      />
      <button type="submit">Log in</button>
      {error && (
        <div class="error" role="alert">
          {error}
        </div>
      )}
    </form>
  );
}
