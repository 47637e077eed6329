// Placeholder: replaced by the shared Temporal dev server setup (see src/temporal/dev-server.ts).
export default async function setup(): Promise<void> {}
