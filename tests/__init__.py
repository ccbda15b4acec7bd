"""kafkacodec's tests, in folders by layer; what they share is in tests.support."""
