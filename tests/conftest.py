"""Suite-wide test configuration."""


def pytest_configure(config):
    # langchain-core's retry parameters still call tenacity's initial backoff "initial", which
    # tenacity deprecates; tests with a short backoff would otherwise warn on every retry wrapper.
    config.addinivalue_line("filterwarnings", "ignore:The 'initial' parameter is deprecated:DeprecationWarning")
