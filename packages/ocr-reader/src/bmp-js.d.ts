declare module "bmp-js" {
  interface DecodedBmp {
    width: number;
    height: number;
    /** Four bytes a pixel: alpha, blue, green, red. */
    data: Buffer;
  }
  const bmp: { decode(buffer: Buffer): DecodedBmp };
  export default bmp;
}
