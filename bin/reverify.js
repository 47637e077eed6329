#!/usr/bin/env node
// The `reverify` command. The project runs from its TypeScript sources through tsx (no build step).
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
