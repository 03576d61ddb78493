; Python definitions and references. Each definition pattern captures the
; whole definition as @definition.KIND and its name as @name; each
; reference pattern captures @reference.KIND and @name.

(class_definition name: (identifier) @name) @definition.class

(function_definition name: (identifier) @name) @definition.func

(module (expression_statement
  (assignment left: (identifier) @name right: (lambda))) @definition.func)

(module (expression_statement
  (assignment left: (identifier) @name)) @definition.constant)

(class_definition body: (block (expression_statement
  (assignment left: (identifier) @name)) @definition.field))

(call function: (identifier) @name) @reference.call

(call function: (attribute attribute: (identifier) @name)) @reference.call

(class_definition superclasses: (argument_list (identifier) @name) @reference.class)
