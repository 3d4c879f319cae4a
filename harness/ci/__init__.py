"""Running the harness inside CI systems: the steps of the GitHub Action (action.yml)."""
