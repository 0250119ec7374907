/** Live updates by polling: simple, works through any proxy or SSH tunnel, and stops when the tab is hidden. */
import { useEffect, useRef, useState } from 'preact/hooks';

export interface Polled<T> {
  data: T | undefined;
  error: Error | undefined;
}

/**
 * Calls `load` now and then every `interval_ms` while the page is visible (never two at once);
 * restarts when `key` changes. Returns the latest answer and the latest error.
 */
export function usePoll<T>(load: () => Promise<T>, interval_ms: number, key: string): Polled<T> {
  const [state, setState] = useState<Polled<T>>({ data: undefined, error: undefined });
  const loadRef = useRef(load);
  loadRef.current = load;
  useEffect(() => {
    let stopped = false;
    let timer: number | undefined;
    setState({ data: undefined, error: undefined });
    const tick = async () => {
      if (stopped) return;
      if (document.visibilityState !== 'hidden') {
        try {
          const data = await loadRef.current();
          if (!stopped) setState({ data, error: undefined });
        } catch (error) {
          if (!stopped) setState((s) => ({ data: s.data, error: error as Error }));
        }
      }
      if (!stopped) timer = window.setTimeout(() => void tick(), interval_ms);
    };
    void tick();
    return () => {
      stopped = true;
      window.clearTimeout(timer);
    };
  }, [key, interval_ms]);
  return state;
}
