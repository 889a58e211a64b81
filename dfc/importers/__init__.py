"""The importers: ONNX models (`onnx_import`) and StableHLO from JAX (`stablehlo_import`) into library-level IR."""
