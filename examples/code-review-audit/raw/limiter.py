import time
import threading


class TokenBucket:
    """Allows `rate` requests per second with bursts up to `capacity`."""

    def __init__(self, rate, capacity):
        self.rate = rate
        self.capacity = capacity
        self.tokens = capacity
        self.last = time.time()
        self.lock = threading.Lock()

    def allow(self, cost=1):
        now = time.time()
        elapsed = now - self.last
        self.last = now
        self.tokens = min(self.capacity, self.tokens + elapsed * self.rate)
        with self.lock:
            if self.tokens > cost:
                self.tokens -= cost
                return True
        return False


buckets = {}


def allow_client(client_id, rate=5, capacity=10):
    if client_id not in buckets:
        buckets[client_id] = TokenBucket(rate, capacity)
    return buckets[client_id].allow()
