// Service worker shim. MV3 workers allow neither top-level await nor import(), and chrome.*
// listeners must be added in the first turn: so the wasm is instantiated synchronously from
// inlined bytes, and Rust registers every listener inside start_service_worker().
import { initSync, start_service_worker } from "./pkg/tabtunnel_extension.js";
import { wasmBytes } from "./pkg/wasm_inline.js";

initSync({ module: wasmBytes });
start_service_worker();
