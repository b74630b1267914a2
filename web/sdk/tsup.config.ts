import { defineConfig } from 'tsup';

// One entry, every format docs/spec.md §4.3 names: ESM, CJS, an IIFE exposing `Service`, and types.
export default defineConfig({
  entry: { index: 'src/index.ts' },
  format: ['esm', 'cjs', 'iife'],
  globalName: 'Service',
  outExtension: ({ format }) => ({ js: format === 'cjs' ? '.cjs' : format === 'iife' ? '.global.js' : '.js' }),
  dts: { entry: { index: 'src/index.ts' } },
  target: 'es2019',
  platform: 'browser',
  sourcemap: true,
  clean: true,
  treeshake: true,
});
