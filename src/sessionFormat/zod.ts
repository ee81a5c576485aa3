import { config } from 'zod/mini';
import en from 'zod/v4/locales/en.js';

/**
 * The one way into zod for every schema of the project: `zod/mini`, tree-shaken to the
 * few kilobytes the schemas use (the classic API is 450 KB, and the editor's extension
 * and the viewer page load it at every start), with English messages, which users read
 * in config errors and skipped-line warnings. Configured here, once, before any schema
 * is used. Import it as a namespace (`import * as z from '…/sessionFormat/zod.js'`): a
 * namespace import keeps tree-shaking, a re-exported namespace object would not. The
 * lint forbids importing `zod` anywhere else.
 */
config(en());

// eslint-disable-next-line no-restricted-syntax -- this module stands in for zod/mini itself
export * from 'zod/mini';
