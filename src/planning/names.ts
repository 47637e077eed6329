/** Interns names (agents, resources servers) into small integers for the plan records. */
export class Names {
  readonly list: string[] = [];
  private readonly ids = new Map<string, number>();
  id(name: string): number {
    let id = this.ids.get(name);
    if (id === undefined) {
      id = this.list.length;
      this.list.push(name);
      this.ids.set(name, id);
    }
    return id;
  }
}
