import { ByteBuffer, Encoding } from "flatbuffers";
import protobuf from "protobufjs";

/**
 * ONNX Runtime's own model format (".ort", a FlatBuffer) read back into an ONNX model, with the
 * weights that the file stores compressed made whole again.
 *
 * Why: the only registry package that carries Moonshine's English model (PyPI's `moonshine-cpp`,
 * by its authors) ships it as ".ort" files whose weights are int8 that the graph turns back into
 * floats (Cast, Mul by a scale, Add an offset) on every run. ONNX Runtime applies no graph
 * optimisation to an ".ort" model, so a decoder step spent 80% of its time re-making its weights
 * (the 32,768-word embedding alone: 13 M values cast, scaled, shifted and transposed per token).
 * As an ONNX model with those values computed once, the same step runs five times faster and the
 * runtime folds what remains constant when it loads the model.
 *
 * The format's tables and field slots are ONNX Runtime's schema (onnxruntime/core/flatbuffers/
 * schema/ort.fbs); ONNX's field numbers are onnx.proto's. Both files' enums for tensor element
 * types and attribute types carry ONNX's own numbers, so they are copied as they are. Only what a
 * model needs to run is carried over (no doc strings, no kernel hints, no saved optimisations).
 */

/** The subset of onnx.proto (ONNX's IR, proto2) a converted model is written with. */
const ONNX_PROTO = `
syntax = "proto2";
package onnx;
message AttributeProto {
  optional string name = 1; optional int32 type = 20; optional float f = 2; optional int64 i = 3;
  optional bytes s = 4; optional TensorProto t = 5; optional GraphProto g = 6;
  repeated float floats = 7; repeated int64 ints = 8; repeated bytes strings = 9;
  repeated TensorProto tensors = 10; repeated GraphProto graphs = 11;
}
message ValueInfoProto { optional string name = 1; optional TypeProto type = 2; }
message NodeProto {
  repeated string input = 1; repeated string output = 2; optional string name = 3;
  optional string op_type = 4; optional string domain = 7; repeated AttributeProto attribute = 5;
}
message ModelProto {
  optional int64 ir_version = 1; repeated OperatorSetIdProto opset_import = 8;
  optional string producer_name = 2; optional GraphProto graph = 7;
}
message GraphProto {
  repeated NodeProto node = 1; optional string name = 2; repeated TensorProto initializer = 5;
  repeated ValueInfoProto input = 11; repeated ValueInfoProto output = 12;
}
message TensorProto {
  repeated int64 dims = 1; optional int32 data_type = 2; repeated bytes string_data = 6;
  optional string name = 8; optional bytes raw_data = 9;
}
message TensorShapeProto {
  message Dimension { optional int64 dim_value = 1; optional string dim_param = 2; }
  repeated Dimension dim = 1;
}
message TypeProto {
  message Tensor { optional int32 elem_type = 1; optional TensorShapeProto shape = 2; }
  optional Tensor tensor_type = 1;
}
message OperatorSetIdProto { optional string domain = 1; optional int64 version = 2; }
`;

/** ONNX's element types (TensorProto.DataType), the same numbers in both formats. */
const FLOAT = 1;
const UINT8 = 2;
const INT8 = 3;
const STRING = 8;

/** ONNX's attribute types (AttributeProto.AttributeType), the same numbers in both formats. */
const ATTRIBUTE = {
  FLOAT: 1,
  INT: 2,
  STRING: 3,
  TENSOR: 4,
  GRAPH: 5,
  FLOATS: 6,
  INTS: 7,
  STRINGS: 8,
  TENSORS: 9,
  GRAPHS: 10,
} as const;

interface TensorMessage {
  name: string;
  dims: number[];
  data_type: number;
  raw_data?: Uint8Array;
  string_data?: Uint8Array[];
}
interface NodeMessage {
  name: string;
  op_type: string;
  domain: string;
  input: string[];
  output: string[];
  attribute: object[];
}
interface GraphMessage {
  name: string;
  node: NodeMessage[];
  initializer: TensorMessage[];
  input: object[];
  output: object[];
}

/** The model cannot be read: not an ".ort" file, or one using what the converter does not carry. */
export class OrtFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "OrtFormatError";
  }
}

/** The ONNX model (protobuf bytes) an ".ort" file holds, its compressed weights made whole. */
export function ortToOnnx(ort: Uint8Array): Uint8Array {
  const bb = new ByteBuffer(ort);
  if (ort.length < 8 || bb.getBufferIdentifier() !== "ORTM")
    throw new OrtFormatError("not an ONNX Runtime model (no ORTM identifier)");
  const reader = new OrtReader(bb);
  const session = bb.readInt32(bb.position()) + bb.position();
  const model = reader.table(session, 6);
  if (model === null) throw new OrtFormatError("the file holds no model");
  const graph = reader.table(model, 18);
  if (graph === null) throw new OrtFormatError("the model holds no graph");
  const converted = reader.graph(graph);
  foldConstantWeights(converted);
  const root = protobuf.parse(ONNX_PROTO, { keepCase: true }).root;
  const Model = root.lookupType("onnx.ModelProto");
  const message = Model.fromObject({
    ir_version: reader.int64(model, 4),
    opset_import: reader.tables(model, 6).map((o) => ({
      domain: reader.string(o, 4) ?? "",
      version: reader.int64(o, 6),
    })),
    producer_name: "locus ort-to-onnx",
    graph: converted,
  });
  return Model.encode(message).finish();
}

/** Reads the tables of ort.fbs at their field slots (vtable offsets: 4 for the first field, then +2). */
class OrtReader {
  constructor(private readonly bb: ByteBuffer) {}

  private field(table: number, slot: number): number {
    return this.bb.__offset(table, slot);
  }

  table(table: number, slot: number): number | null {
    const o = this.field(table, slot);
    return o ? this.bb.__indirect(table + o) : null;
  }

  /** A vector field's elements, each read at its place (elements `size` bytes apart). */
  private vector<T>(table: number, slot: number, size: number, read: (at: number) => T): T[] {
    const o = this.field(table, slot);
    if (!o) return [];
    const start = this.bb.__vector(table + o);
    return Array.from({ length: this.bb.__vector_len(table + o) }, (_, i) => read(start + i * size));
  }

  tables(table: number, slot: number): number[] {
    return this.vector(table, slot, 4, (at) => this.bb.__indirect(at));
  }

  string(table: number, slot: number): string | null {
    const o = this.field(table, slot);
    return o ? (this.bb.__string(table + o) as string) : null;
  }

  strings(table: number, slot: number): string[] {
    return this.vector(table, slot, 4, (at) => this.bb.__string(at) as string);
  }

  /** A vector of bytes, as a view of the file (not copied). */
  bytes(table: number, slot: number): Uint8Array {
    const o = this.field(table, slot);
    if (!o) return new Uint8Array(0);
    const start = this.bb.__vector(table + o);
    return this.bb.bytes().subarray(start, start + this.bb.__vector_len(table + o));
  }

  byteStrings(table: number, slot: number): Uint8Array[] {
    return this.vector(table, slot, 4, (at) => this.bb.__string(at, Encoding.UTF8_BYTES) as Uint8Array);
  }

  int32(table: number, slot: number): number {
    const o = this.field(table, slot);
    return o ? this.bb.readInt32(table + o) : 0;
  }

  uint8(table: number, slot: number): number {
    const o = this.field(table, slot);
    return o ? this.bb.readUint8(table + o) : 0;
  }

  int64(table: number, slot: number): number {
    const o = this.field(table, slot);
    return o ? Number(this.bb.readInt64(table + o)) : 0;
  }

  float32(table: number, slot: number): number {
    const o = this.field(table, slot);
    return o ? this.bb.readFloat32(table + o) : 0;
  }

  int64s(table: number, slot: number): number[] {
    return this.vector(table, slot, 8, (at) => Number(this.bb.readInt64(at)));
  }

  float32s(table: number, slot: number): number[] {
    return this.vector(table, slot, 4, (at) => this.bb.readFloat32(at));
  }

  /** Tensor: name 4, doc 6, dims 8, data_type 10, raw_data 12, string_data 14, external offset 16. */
  tensor(t: number): TensorMessage {
    const name = this.string(t, 4) ?? "";
    const dataType = this.int32(t, 10);
    if (this.int64(t, 16) > 0 || (this.field(t, 16) && this.bytes(t, 12).length === 0 && dataType !== STRING))
      throw new OrtFormatError(`tensor ${name} keeps its data outside the model, which is not carried over`);
    const tensor: TensorMessage = { name, dims: this.int64s(t, 8), data_type: dataType };
    if (dataType === STRING) tensor.string_data = this.byteStrings(t, 14);
    else tensor.raw_data = this.bytes(t, 12);
    return tensor;
  }

  /** ValueInfo: name 4, type 8 → TypeInfo: value_type 6, value 8 → TensorTypeAndShape: elem 4, shape 6. */
  valueInfo(v: number): object {
    const name = this.string(v, 4) ?? "";
    const type = this.table(v, 8);
    if (type === null || this.uint8(type, 6) !== 1 /* tensor_type */) return { name };
    const tensorType = this.table(type, 8);
    if (tensorType === null) return { name };
    const shape = this.table(tensorType, 6);
    return {
      name,
      type: {
        tensor_type: {
          elem_type: this.int32(tensorType, 4),
          ...(shape === null
            ? {}
            : {
                shape: {
                  // Dimension: value 4 → DimensionValue: dim_type 4 (1 value, 2 param), dim_value 6, dim_param 8.
                  dim: this.tables(shape, 4).map((d) => {
                    const value = this.table(d, 4);
                    if (value === null) return {};
                    const kind = this.uint8(value, 4);
                    if (kind === 1) return { dim_value: this.int64(value, 6) };
                    if (kind === 2) return { dim_param: this.string(value, 8) ?? "" };
                    return {};
                  }),
                },
              }),
        },
      },
    };
  }

  /**
   * Attribute: name 4, doc 6, type 8, f 10, i 12, s 14, t 16, g 18, floats 20, ints 22,
   * strings 24, tensors 26, graphs 28.
   */
  attribute(a: number): object {
    const name = this.string(a, 4) ?? "";
    const type = this.int32(a, 8);
    const value = (): object => {
      switch (type) {
        case ATTRIBUTE.FLOAT:
          return { f: this.float32(a, 10) };
        case ATTRIBUTE.INT:
          return { i: this.int64(a, 12) };
        case ATTRIBUTE.STRING:
          return { s: Buffer.from(this.string(a, 14) ?? "", "utf8") };
        case ATTRIBUTE.TENSOR: {
          const t = this.table(a, 16);
          return t === null ? {} : { t: this.tensor(t) };
        }
        case ATTRIBUTE.GRAPH: {
          const g = this.table(a, 18);
          return g === null ? {} : { g: this.graph(g) };
        }
        case ATTRIBUTE.FLOATS:
          return { floats: this.float32s(a, 20) };
        case ATTRIBUTE.INTS:
          return { ints: this.int64s(a, 22) };
        case ATTRIBUTE.STRINGS:
          return { strings: this.strings(a, 24).map((s) => Buffer.from(s, "utf8")) };
        case ATTRIBUTE.TENSORS:
          return { tensors: this.tables(a, 26).map((t) => this.tensor(t)) };
        case ATTRIBUTE.GRAPHS:
          return { graphs: this.tables(a, 28).map((g) => this.graph(g)) };
        default:
          throw new OrtFormatError(`attribute ${name} is of type ${type}, which is not carried over`);
      }
    };
    return { name, type, ...value() };
  }

  /**
   * Graph: initializers 4, node_args 6, nodes 8, inputs 14, outputs 16, sparse_initializers 18.
   * Node: name 4, domain 8, index 12, op_type 14, inputs 20, outputs 22, attributes 24.
   */
  graph(g: number): GraphMessage {
    if (this.tables(g, 18).length > 0) throw new OrtFormatError("sparse initializers are not carried over");
    const initializer = this.tables(g, 4).map((t) => this.tensor(t));
    const infos = new Map<string, object>();
    for (const v of this.tables(g, 6)) {
      const info = this.valueInfo(v) as { name: string };
      infos.set(info.name, info);
    }
    const held = new Set(initializer.map((t) => t.name));
    const info = (name: string) => infos.get(name) ?? { name };
    // ONNX wants nodes in an order where each comes after what it reads; the file's node indices
    // are the graph's own (topological) order.
    const nodes = this.tables(g, 8)
      .map((n) => ({ index: this.int32(n, 12), n }))
      .sort((a, b) => a.index - b.index)
      .map(({ n }) => ({
        name: this.string(n, 4) ?? "",
        op_type: this.string(n, 14) ?? "",
        domain: this.string(n, 8) ?? "",
        input: this.strings(n, 20),
        output: this.strings(n, 22),
        attribute: this.tables(n, 24).map((a) => this.attribute(a)),
      }));
    return {
      name: "graph",
      node: nodes,
      initializer,
      input: this.strings(g, 14)
        .filter((name) => !held.has(name))
        .map(info),
      output: this.strings(g, 16).map(info),
    };
  }
}

/**
 * Computes, once, the weights the graph re-makes from stored integers on every run: a Cast of an
 * int8 or uint8 initializer to float, then Mul and Add by one-value initializers, become one float
 * initializer, and the nodes go. Anything else is left for the runtime.
 */
function foldConstantWeights(graph: GraphMessage): void {
  const initializers = new Map(graph.initializer.map((t) => [t.name, t]));
  const scalar = (name: string | undefined): number | null => {
    const t = name === undefined ? undefined : initializers.get(name);
    if (!t?.raw_data || t.data_type !== FLOAT || t.raw_data.length !== 4) return null;
    return new DataView(t.raw_data.buffer, t.raw_data.byteOffset, 4).getFloat32(0, true);
  };
  const readers = new Map<string, number>();
  for (const name of [...graph.node.flatMap((n) => n.input), ...subgraphInputs(graph)])
    readers.set(name, (readers.get(name) ?? 0) + 1);
  const floats = new Map<string, { dims: number[]; values: Float32Array }>();
  const folded = new Set<NodeMessage>();
  for (const node of graph.node) {
    const [first, second] = node.input;
    const [output] = node.output;
    if (output === undefined || first === undefined) continue;
    if (node.op_type === "Cast" && node.domain === "") {
      const to = (node.attribute as { name: string; i?: number }[]).find((a) => a.name === "to")?.i;
      const source = initializers.get(first);
      if (to !== FLOAT || !source?.raw_data || (source.data_type !== INT8 && source.data_type !== UINT8))
        continue;
      const raw = source.raw_data;
      const values = new Float32Array(raw.length);
      if (source.data_type === INT8) {
        const ints = new Int8Array(raw.buffer, raw.byteOffset, raw.length);
        for (let i = 0; i < ints.length; i++) values[i] = ints[i] ?? 0;
      } else {
        for (let i = 0; i < raw.length; i++) values[i] = raw[i] ?? 0;
      }
      floats.set(output, { dims: source.dims, values });
      folded.add(node);
    } else if ((node.op_type === "Mul" || node.op_type === "Add") && node.domain === "") {
      const tensor = floats.get(first);
      const by = scalar(second);
      // Changed in place, so only a value nothing else reads.
      if (!tensor || by === null || readers.get(first) !== 1) continue;
      const values = tensor.values;
      if (node.op_type === "Mul") for (let i = 0; i < values.length; i++) values[i] = (values[i] ?? 0) * by;
      else for (let i = 0; i < values.length; i++) values[i] = (values[i] ?? 0) + by;
      floats.delete(first);
      floats.set(output, tensor);
      folded.add(node);
    }
  }
  // A chain's last value is read by the rest of the graph; its earlier values by nothing else.
  const read = new Set([
    ...graph.node.filter((n) => !folded.has(n)).flatMap((n) => n.input),
    ...subgraphInputs(graph),
  ]);
  for (const [name, { dims, values }] of floats) {
    if (!read.has(name)) continue;
    graph.initializer.push({
      name,
      dims,
      data_type: FLOAT,
      raw_data: new Uint8Array(values.buffer, values.byteOffset, values.byteLength),
    });
  }
  graph.node = graph.node.filter((n) => !folded.has(n));
  const stillRead = new Set([...graph.node.flatMap((n) => n.input), ...subgraphInputs(graph)]);
  graph.initializer = graph.initializer.filter((t) => stillRead.has(t.name));
}

/** Names the graph's subgraphs (If branches, Loop bodies) read from the graph around them. */
function subgraphInputs(graph: GraphMessage): string[] {
  const names: string[] = [];
  for (const node of graph.node) {
    for (const a of node.attribute as { g?: GraphMessage; graphs?: GraphMessage[] }[]) {
      for (const g of [...(a.g ? [a.g] : []), ...(a.graphs ?? [])]) {
        names.push(...g.node.flatMap((n) => n.input), ...subgraphInputs(g));
      }
    }
  }
  return names;
}
