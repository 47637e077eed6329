export declare const bundle: string;
/** True when `reverify` runs the bundle (dist/cli/main.mjs), false when it runs the TypeScript sources through tsx. */
export declare function runsBundle(): boolean;
