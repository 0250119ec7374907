/** A parsed XML element: enough for nvidia-smi's attribute-light, mixed-content-free output. */
export interface XmlElement {
  readonly name: string;
  readonly attrs: Readonly<Record<string, string>>;
  readonly children: XmlElement[];
  text: string;
}

const ENTITIES: Readonly<Record<string, string>> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

function decode(s: string): string {
  return s.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (m, e: string) => {
    if (e[0] === '#')
      return String.fromCodePoint(e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : Number(e.slice(1)));
    return ENTITIES[e] ?? m;
  });
}

/**
 * Parses an XML document into an element tree. Skips the prolog, DOCTYPE, comments and
 * processing instructions; throws SyntaxError on mismatched tags. Pure.
 */
export function parseXml(text: string): XmlElement {
  const root: XmlElement = { name: '#document', attrs: {}, children: [], text: '' };
  const stack: XmlElement[] = [root];
  const re =
    /<!--[\s\S]*?-->|<!\[CDATA\[([\s\S]*?)\]\]>|<![^>]*>|<\?[\s\S]*?\?>|<\/\s*([^\s>]+)\s*>|<([^\s/>]+)((?:\s+[^\s=/>]+\s*=\s*(?:"[^"]*"|'[^']*'))*)\s*(\/?)>|([^<]+)/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(text)) !== null) {
    const top = stack[stack.length - 1]!;
    if (m[1] !== undefined) top.text += m[1];
    else if (m[2] !== undefined) {
      if (top.name !== m[2]) throw new SyntaxError(`mismatched </${m[2]}>, expected </${top.name}>`);
      top.text = top.text.trim();
      stack.pop();
    } else if (m[3] !== undefined) {
      const attrs: Record<string, string> = {};
      for (const a of (m[4] ?? '').matchAll(/([^\s=]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g))
        attrs[a[1]!] = decode(a[2] ?? a[3] ?? '');
      const el: XmlElement = { name: m[3], attrs, children: [], text: '' };
      top.children.push(el);
      if (m[5] !== '/') stack.push(el);
    } else if (m[6] !== undefined) {
      top.text += decode(m[6]);
    }
  }
  if (stack.length !== 1) throw new SyntaxError(`unclosed <${stack[stack.length - 1]!.name}>`);
  return root;
}

/** First descendant reached by a slash path of child names, e.g. `child(gpu, "utilization/gpu_util")`. */
export function child(el: XmlElement | undefined, path: string): XmlElement | undefined {
  let cur = el;
  for (const part of path.split('/')) {
    if (!cur) return undefined;
    cur = cur.children.find((c) => c.name === part);
  }
  return cur;
}

/** Text at a path, or undefined when missing or "N/A"-like. */
export function textAt(el: XmlElement | undefined, path: string): string | undefined {
  const t = child(el, path)?.text;
  if (
    t === undefined ||
    t === '' ||
    /^\[?(N\/A|Not Supported|Unknown Error|Requested functionality has been deprecated)\]?$/i.test(t)
  )
    return undefined;
  return t;
}

/** The first present value among alternative `paths` (schemas rename fields across versions). */
export function firstTextAt(el: XmlElement, paths: readonly string[]): string | undefined {
  for (const p of paths) {
    const t = textAt(el, p);
    if (t !== undefined) return t;
  }
  return undefined;
}
