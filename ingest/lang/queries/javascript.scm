; JavaScript definitions and references (see python.scm for the capture
; convention).

(class_declaration name: (identifier) @name) @definition.class

(function_declaration name: (identifier) @name) @definition.func

(generator_function_declaration name: (identifier) @name) @definition.func

(method_definition name: (_) @name) @definition.method

(field_definition property: (property_identifier) @name
  value: [(arrow_function) (function_expression)]) @definition.method

(lexical_declaration (variable_declarator name: (identifier) @name
  value: [(arrow_function) (function_expression) (generator_function)])) @definition.func

(variable_declaration (variable_declarator name: (identifier) @name
  value: [(arrow_function) (function_expression) (generator_function)])) @definition.func

(lexical_declaration (variable_declarator name: (identifier) @name
  value: (class))) @definition.class

(program (lexical_declaration (variable_declarator name: (identifier) @name)) @definition.constant)

(program (export_statement (lexical_declaration (variable_declarator name: (identifier) @name)) @definition.constant))

(program (variable_declaration (variable_declarator name: (identifier) @name)) @definition.variable)

(call_expression function: (identifier) @name) @reference.call

(call_expression function: (member_expression property: (property_identifier) @name)) @reference.call

(new_expression constructor: (identifier) @name) @reference.class
