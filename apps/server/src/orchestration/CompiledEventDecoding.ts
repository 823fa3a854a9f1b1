import { RuntimeEvent } from "@planbridge/contracts"
import { SchemaJITCompiler } from "effect/schema"

/*
 * Canonical events are decoded by code Effect's JIT compiler generates from the same Schema
 * (issue 17: decoding was a quarter of ingestion; compiled, ~40 % less), for every decoder of
 * this AST in the server that has not run yet, so this module is loaded by ingestion's before
 * any event is decoded. Server only: the web client's page forbids `new Function` (its CSP's
 * `script-src 'self'`). test/orchestration/eventDecoding.test.ts checks the compiled decoder
 * accepts, outputs and reports exactly what the interpreter does.
 */
SchemaJITCompiler.enable(RuntimeEvent.ast)
