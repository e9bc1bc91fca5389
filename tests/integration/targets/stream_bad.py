"""Streaming targets that break the contract (each must give one line and exit 2)."""

not_callable = 42


class NoFeed:
    def finish(self):
        return None


def no_feed():
    return NoFeed()


class Odd:
    def feed(self, delta):
        return 3.14  # no known event shape

    def finish(self):
        return None


def odd_events():
    return Odd()


def generator_consumer(chunks):
    for chunk in chunks:
        yield chunk


def no_argument_consumer():  # a parser factory given as --consumer: it cannot take the chunks
    return []
