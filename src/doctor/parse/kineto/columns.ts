/** A growable column of doubles: compact storage for millions of trace events (8 bytes each). */
export class NumberColumn {
  private data: Float64Array;
  private size = 0;

  constructor(initialCapacity = 1024) {
    this.data = new Float64Array(initialCapacity);
  }

  get length(): number {
    return this.size;
  }

  push(value: number): void {
    if (this.size === this.data.length) {
      const next = new Float64Array(this.data.length * 2);
      next.set(this.data);
      this.data = next;
    }
    this.data[this.size++] = value;
  }

  get(index: number): number {
    return this.data[index] as number;
  }

  /** Overwrites a filled entry. */
  set(index: number, value: number): void {
    if (index < this.size) this.data[index] = value;
  }

  /** A view over the filled part (no copy); valid until the next push. */
  view(): Float64Array {
    return this.data.subarray(0, this.size);
  }
}

/** Interns strings to small integer ids so repeated kernel names are stored once. */
export class StringTable {
  private readonly ids = new Map<string, number>();
  readonly names: string[] = [];

  id(name: string): number {
    let id = this.ids.get(name);
    if (id === undefined) {
      id = this.names.length;
      this.ids.set(name, id);
      this.names.push(name);
    }
    return id;
  }

  name(id: number): string {
    return this.names[id] ?? '';
  }
}
