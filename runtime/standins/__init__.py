"""The stand-in models: the offline rule-based default and the scripted model of the tests."""
