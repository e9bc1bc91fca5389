"""What toolfuzz tests, one package per harness: parser, executor, agent."""
