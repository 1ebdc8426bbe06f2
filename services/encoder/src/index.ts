export { startEncoderModule, type EncoderDeps } from "./encoder-module.ts";
export { ENCODE_PAGE, PassageEncoder, type EncoderObserver } from "./passage-encoder.ts";
