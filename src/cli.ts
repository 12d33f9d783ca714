#!/usr/bin/env node
/** The `rudder` executable. Subcommands live in src/cli/. */
process.stdout.write("usage: rudder <run|chat|serve|schedule|send> ...\n");
