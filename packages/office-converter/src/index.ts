export {
  DEFAULT_INSPECTION_LIMITS,
  inspectOfficeDocument,
  type InspectionLimits,
  type OfficeFormat,
  type OfficeInspection,
} from "./inspect.ts";
export {
  DEFAULT_OFFICE_MEMORY_MB,
  LIBREOFFICE_PACKAGES,
  OfficeConverter,
  type NetworkIsolation,
  type OfficeConverterOptions,
} from "./converter.ts";
