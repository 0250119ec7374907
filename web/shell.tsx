/** Pieces every page uses: navigation and error lines. */

/** Navigates inside the single-page app (hash routes keep the server to one index.html). */
export function go(path: string): void {
  location.hash = `#${path}`;
}

export function ErrorLine(p: { error: Error | undefined; loading?: boolean }) {
  if (p.error)
    return (
      <div class="error" role="alert">
        {p.error.message}
      </div>
    );
  return p.loading ? <div class="muted">loading…</div> : null;
}
