package dev.writeonce.teststore;

import java.io.IOException;

/** Reads a store's own request and traffic counters. */
public interface TrafficMeter {

  /** The counters now; every request answered before the call is included. */
  Traffic read() throws IOException;

  /** Where the counts come from, for reports. */
  String source();
}
