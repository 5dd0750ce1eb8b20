import { defineConfig } from 'tsup'

export default defineConfig({
  entry: {
    index: 'src/index.ts',
    node: 'adapters/node.ts',
    express: 'adapters/express.ts',
    koa: 'adapters/koa.ts',
    otel: 'src/otel/index.ts',
    client: 'src/client/index.ts',
    testing: 'src/testing/index.ts',
  },
  format: ['esm', 'cjs'],
  dts: true,
  clean: true,
  target: 'node20',
  platform: 'node',
  splitting: true,
  sourcemap: false,
  treeshake: true,
  // The adapters are typed structurally and never import their framework; this keeps it that way if one ever does.
  // `@opentelemetry/api` is the otel entry's optional peer: the host's copy, never a bundled one.
  external: ['express', 'koa', '@opentelemetry/api'],
})
