/**
 * Key -> place of a materialized input row, in compact arrays: a Map from the key's canonical id to
 * a slot, and typed arrays for the slot's byte offset, length, agent and server. About 60 bytes per
 * row instead of the row itself (spec §4.7 holds every input row in memory).
 */
export class InputIndex {
  private readonly slots = new Map<string, number>();
  private offsets = new Float64Array(1024);
  private lengths = new Uint32Array(1024);
  private agents = new Uint16Array(1024);
  private servers = new Uint16Array(1024);
  private used = 0;

  /** Records a row; a later row with the same key replaces the earlier one (spec §1.3). */
  set(id: string, offset: number, length: number, agent: number, server: number): void {
    let slot = this.slots.get(id);
    if (slot === undefined) {
      if (this.used === this.offsets.length) this.grow();
      slot = this.used++;
      this.slots.set(id, slot);
    }
    this.offsets[slot] = offset;
    this.lengths[slot] = length;
    this.agents[slot] = agent;
    this.servers[slot] = server;
  }

  get(id: string): { offset: number; length: number; agent: number; server: number } | undefined {
    const slot = this.slots.get(id);
    if (slot === undefined) return undefined;
    return { offset: this.offsets[slot], length: this.lengths[slot], agent: this.agents[slot], server: this.servers[slot] };
  }

  get size(): number {
    return this.used;
  }

  private grow(): void {
    const n = this.offsets.length * 2;
    const grow = <T extends Float64Array | Uint32Array | Uint16Array>(a: T, make: (n: number) => T): T => {
      const b = make(n);
      b.set(a);
      return b;
    };
    this.offsets = grow(this.offsets, (k) => new Float64Array(k));
    this.lengths = grow(this.lengths, (k) => new Uint32Array(k));
    this.agents = grow(this.agents, (k) => new Uint16Array(k));
    this.servers = grow(this.servers, (k) => new Uint16Array(k));
  }
}
