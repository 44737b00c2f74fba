"""The case form and its parts, one widget per module: `CaseForm` (dims, seed, special values,
derived figures, problems), `RecipeGrid` (a recipe field per input binding) and `Toggle`."""
