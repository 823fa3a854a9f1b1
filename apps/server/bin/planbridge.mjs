#!/usr/bin/env node
// The CLI (bin/planbridge.cjs, the package's bin), for the scripts and tests that name this file.
import "./planbridge.cjs"
