"""The parser harness: model outputs generated, run on the user's parser, judged against their truth."""
