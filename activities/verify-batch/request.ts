// The request type lives in the contract (`reverify status` decodes it from the history too).
export type { VerifyBatchRequest } from '../../src/contract/verify-batch-request.js';
