// Jest's node environment, with the typed-array constructors of Node's own realm. Jest runs each
// suite in a separate realm, and native modules create arrays in Node's: ONNX Runtime (the
// sentence encoder) hands back its output as such a Float32Array, and its JavaScript half, loaded
// in the suite's realm, refuses it ("A float32 tensor's data must be type of Float32Array").
// Outside jest there is one realm and nothing to do.
import NodeEnvironment from "jest-environment-node";

const SHARED = ["Float32Array", "Float64Array", "BigInt64Array", "Int32Array"];

export default class LocusEnvironment extends NodeEnvironment {
  constructor(config, context) {
    super(config, context);
    for (const name of SHARED) this.global[name] = globalThis[name];
  }
}
