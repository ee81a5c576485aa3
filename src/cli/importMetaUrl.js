// Injected into CommonJS bundles, where ESM dependencies still ask for import.meta.url.
export const import_meta_url = require('node:url').pathToFileURL(__filename).href;
