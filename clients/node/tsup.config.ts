import { defineConfig } from 'tsup';

// ESM, CJS and types for Node 18+; no runtime dependency is bundled because there is none.
export default defineConfig({
  entry: { index: 'src/index.ts' },
  format: ['esm', 'cjs'],
  outExtension: ({ format }) => ({ js: format === 'cjs' ? '.cjs' : '.js' }),
  dts: { entry: { index: 'src/index.ts' } },
  target: 'node18',
  platform: 'node',
  sourcemap: true,
  clean: true,
  treeshake: true,
});
