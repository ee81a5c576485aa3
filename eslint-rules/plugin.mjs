// The project's own lint rules, as the ESLint plugin `codeloops` (eslint.config.mjs).
import { maxClassLines } from './maxClassLines.mjs';
import { noImportCycles } from './noImportCycles.mjs';

export default { rules: { 'no-import-cycles': noImportCycles, 'max-class-lines': maxClassLines } };
