// Public surface of the wire component; the package root re-exports it.
// Each module of the component adds its exports here.
export {};
