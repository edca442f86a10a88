//! Kafka-format partition logs.
