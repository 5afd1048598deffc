// The d3 modules Graphloom's explorer uses, re-exported as one ES module (see build.mjs).
export * from "d3-force";
export * from "d3-zoom";
export * from "d3-drag";
export * from "d3-selection";
