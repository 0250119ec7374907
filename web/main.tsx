/** The dashboard's single-page app: hash routes, login, navigation. */
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import 'uplot/dist/uPlot.min.css';
import './style.css';
import type { DashboardConfig, WhoAmI } from '../src/dashboard/types.js';
import { getJson, getToken, redeemLoginCode, setToken, takeLoginCode, whenUnauthorized } from './api.js';
import { ClusterPage } from './pages/cluster.js';
import { JobPage } from './pages/job.js';
import { PlanPage } from './pages/plan.js';
import { JobsPage } from './pages/jobs.js';
import { LoginPage } from './pages/login.js';
import { SharesPage } from './pages/shares.js';
import { SimPage } from './pages/sim.js';
import { ErrorLine } from './shell.js';

// Before anything renders: a login link's code leaves the address bar and the history at once.
const loginCode = takeLoginCode();

function useHash(): string {
  const [hash, setHash] = useState(location.hash.slice(1));
  useEffect(() => {
    const on = () => setHash(location.hash.slice(1));
    window.addEventListener('hashchange', on);
    return () => window.removeEventListener('hashchange', on);
  }, []);
  return hash;
}

function App() {
  const [config, setConfig] = useState<DashboardConfig | undefined>();
  const [me, setMe] = useState<WhoAmI | null | undefined>(undefined);
  const [error, setError] = useState<Error | undefined>();
  const hash = useHash();

  useEffect(() => {
    whenUnauthorized(() => {
      setToken(null);
      setMe(null);
    });
    getJson<DashboardConfig>('/dash/config').then(setConfig, setError);
  }, []);
  const [loginError, setLoginError] = useState('');
  useEffect(() => {
    if (config?.mode !== 'live') return;
    void (async () => {
      if (loginCode !== undefined) {
        try {
          setToken(await redeemLoginCode(loginCode));
        } catch (err) {
          setLoginError((err as Error).message);
        }
      }
      if (!getToken()) setMe(null);
      else getJson<WhoAmI>('/dash/me').then(setMe, () => setMe(null));
    })();
  }, [config]);

  if (!config) return <ErrorLine error={error} loading />;
  if (config.mode === 'sim')
    return (
      <Frame nav={[['/sim', 'Simulation']]} hash={hash}>
        <SimPage />
      </Frame>
    );
  if (me === undefined) return <div class="muted">loading…</div>;
  if (me === null)
    return (
      <Frame nav={[]} hash={hash}>
        <LoginPage onLogin={setMe} error={loginError} />
      </Frame>
    );

  const route = hash.replace(/^\/+/, '');
  let page;
  if (route.startsWith('job/')) page = <JobPage id={decodeURIComponent(route.slice(4))} me={me} key={route} />;
  else if (route === 'cluster') page = <ClusterPage />;
  else if (route === 'shares') page = <SharesPage />;
  else if (route.startsWith('plan/')) page = <PlanPage planKey={decodeURIComponent(route.slice(5))} key={route} />;
  else page = <JobsPage />;
  const logout = () => {
    setToken(null);
    setMe(null);
  };
  return (
    <Frame
      nav={[
        ['/cluster', 'Cluster'],
        ['/jobs', 'Jobs'],
        ['/shares', 'Shares'],
      ]}
      hash={hash}
      user={me}
      onLogout={logout}
    >
      {page}
    </Frame>
  );
}

function Frame(p: {
  nav: [string, string][];
  hash: string;
  user?: WhoAmI;
  onLogout?: () => void;
  children: preact.ComponentChildren;
}) {
  const current = p.hash === '' ? (p.nav[1]?.[0] ?? p.nav[0]?.[0]) : p.hash;
  return (
    <div>
      <header>
        <span class="brand">goodput</span>
        {p.nav.map(([path, label]) => (
          <a
            href={`#${path}`}
            class={current?.startsWith(path) || (path === '/jobs' && current?.startsWith('/job/')) ? 'active' : ''}
          >
            {label}
          </a>
        ))}
        <span class="spacer" />
        {p.user && (
          <span class="who" id="who">
            {p.user.user}
            {p.user.admin ? ' (admin)' : ''}
          </span>
        )}
        {p.onLogout && (
          <button class="link" onClick={p.onLogout}>
            Log out
          </button>
        )}
      </header>
      <main>{p.children}</main>
    </div>
  );
}

render(<App />, document.getElementById('app')!);
