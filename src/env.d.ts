// Asset imports resolved by Vite (and by the vitest/Node loaders in tests).
declare module '*.wgsl?raw' {
  const source: string;
  export default source;
}
declare module '*.wasm?url' {
  const url: string;
  export default url;
}
