// Side panel shim: load the wasm, then Rust builds and drives the UI.
import init, { start_side_panel } from "./pkg/tabtunnel_extension.js";

init().then(start_side_panel);
